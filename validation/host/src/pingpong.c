// SPDX-License-Identifier: GPL-2.0-only
/*
 * pingpong.c - a pipe ping-pong between two tasks, in the manner of
 * "perf bench sched pipe", written from scratch for fairsim's host
 * validation data.
 *
 * Each pair has two pipes. Task A writes a 4-byte token into pipe 1 and
 * reads it back from pipe 2; task B reads pipe 1 and writes pipe 2. One
 * round trip (two wakeups, at least two context switches when both block)
 * is one "op". With -k K, K independent pairs run at once.
 *
 * usage: pingpong [-l loops | -d seconds] [-k pairs] [-T] [-C cpuA,cpuB]
 *   -l  round trips per pair (default 100000)
 *   -d  instead of a fixed count, every pair runs for this many seconds
 *       (all pairs stay busy for the whole run; task A then sends a stop
 *       token); usecs/op is then seconds / mean round trips per pair
 *   -k  number of independent pairs (default 1)
 *   -T  threads instead of processes
 *   -C  pin task A of every pair to cpuA and task B to cpuB
 *       (-C 0,0: both on one CPU; -C 0,1: every wakeup crosses CPUs)
 *
 * Output (stdout):
 *   pingpong: 1 pairs x 100000 round trips, process mode, cpus any
 *   Total time: 1.234 [sec]
 *   usecs/op: 12.345678          (wall time / loops, i.e. per round trip of one pair;
 *                                 with -d: seconds / mean round trips per pair)
 *   ops/sec: 81000               (all pairs together)
 *   pair 0: 1.230 s 100000 round trips 12.300 usecs/op
 *
 * gcc -O2 -Wall -W pingpong.c -o pingpong -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_TOKEN 0xffffffffu

static long opt_loops = 100000;
static double opt_seconds;
static int opt_pairs = 1;
static int opt_threads;
static int cpu_a = -1, cpu_b = -1;

static int ready_pipe[2];
static int go_pipe[2];

struct task {
	int rd, wr;       /* this task's read and write ends */
	int initiator;    /* 1 for task A */
	int cpu;
	double *elapsed;  /* where A stores its own elapsed seconds */
	long *done;       /* and its number of round trips */
	pthread_t thread;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void xwrite(int fd, const void *buf, size_t len)
{
	for (;;) {
		ssize_t n = write(fd, buf, len);

		if (n == (ssize_t)len)
			return;
		if (n < 0 && errno == EINTR)
			continue;
		die("write");
	}
}

static void xread(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n == (ssize_t)len)
			return;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			fprintf(stderr, "pingpong: unexpected EOF\n");
			exit(1);
		}
		die("read");
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("sched_setaffinity");
}

static void *task_main(void *arg)
{
	struct task *t = arg;
	struct pollfd pfd = { .fd = go_pipe[0], .events = POLLIN };
	uint32_t token = 0;
	double t0;
	long i;
	char c = 'r';

	pin(t->cpu);
	xwrite(ready_pipe[1], &c, 1);
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			die("poll");

	t0 = now_s();
	if (t->initiator) {
		double t_end = t0 + opt_seconds;

		for (i = 0; opt_seconds > 0 || i < opt_loops; i++) {
			if (opt_seconds > 0 && (i & 63) == 0 && now_s() >= t_end)
				break;
			xwrite(t->wr, &token, sizeof(token));
			xread(t->rd, &token, sizeof(token));
			token = (token + 1) & 0x7fffffffu;
		}
		*t->elapsed = now_s() - t0;
		*t->done = i;
		if (opt_seconds > 0) {
			token = STOP_TOKEN;
			xwrite(t->wr, &token, sizeof(token));
		}
	} else {
		for (i = 0; opt_seconds > 0 || i < opt_loops; i++) {
			xread(t->rd, &token, sizeof(token));
			if (token == STOP_TOKEN)
				break;
			xwrite(t->wr, &token, sizeof(token));
		}
	}
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-l loops | -d seconds] [-k pairs] [-T] [-C cpuA,cpuB]\n",
		prog);
	exit(1);
}

int main(int argc, char **argv)
{
	struct task *tasks;
	double *elapsed, t0, total, mean_done;
	long *done, sum_done = 0;
	int c, i, ntasks;
	char byte;

	while ((c = getopt(argc, argv, "l:d:k:TC:h")) != -1) {
		switch (c) {
		case 'l':
			opt_loops = atol(optarg);
			break;
		case 'd':
			opt_seconds = atof(optarg);
			break;
		case 'k':
			opt_pairs = atoi(optarg);
			break;
		case 'T':
			opt_threads = 1;
			break;
		case 'C':
			if (sscanf(optarg, "%d,%d", &cpu_a, &cpu_b) != 2)
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || opt_loops < 1 || opt_pairs < 1 || opt_seconds < 0)
		usage(argv[0]);

	ntasks = opt_pairs * 2;
	tasks = calloc((size_t)ntasks, sizeof(*tasks));
	/* shared with forked children so A can report its own elapsed time */
	elapsed = mmap(NULL, (size_t)opt_pairs * (sizeof(double) + sizeof(long)),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tasks || elapsed == MAP_FAILED)
		die("alloc");
	done = (long *)(elapsed + opt_pairs);
	if (pipe(ready_pipe) < 0 || pipe(go_pipe) < 0)
		die("pipe");

	if (opt_seconds > 0)
		printf("pingpong: %d pairs x %.3f s, %s mode, cpus ",
		       opt_pairs, opt_seconds, opt_threads ? "thread" : "process");
	else
		printf("pingpong: %d pairs x %ld round trips, %s mode, cpus ",
		       opt_pairs, opt_loops, opt_threads ? "thread" : "process");
	if (cpu_a >= 0)
		printf("%d,%d\n", cpu_a, cpu_b);
	else
		printf("any\n");
	fflush(stdout);

	for (i = 0; i < opt_pairs; i++) {
		int p1[2], p2[2];
		struct task *a = &tasks[2 * i], *b = &tasks[2 * i + 1];

		if (pipe(p1) < 0 || pipe(p2) < 0)
			die("pipe");
		a->wr = p1[1];
		a->rd = p2[0];
		a->initiator = 1;
		a->cpu = cpu_a;
		a->elapsed = &elapsed[i];
		a->done = &done[i];
		b->rd = p1[0];
		b->wr = p2[1];
		b->cpu = cpu_b;
	}

	for (i = 0; i < ntasks; i++) {
		if (opt_threads) {
			if (pthread_create(&tasks[i].thread, NULL, task_main,
					   &tasks[i]))
				die("pthread_create");
		} else {
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (pid == 0) {
				task_main(&tasks[i]);
				exit(0);
			}
		}
	}

	for (i = 0; i < ntasks; i++) {
		ssize_t n = read(ready_pipe[0], &byte, 1);

		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n != 1)
			die("read ready");
	}
	t0 = now_s();
	xwrite(go_pipe[1], "g", 1);

	if (opt_threads) {
		for (i = 0; i < ntasks; i++)
			pthread_join(tasks[i].thread, NULL);
	} else {
		for (i = 0; i < ntasks; i++) {
			int status;

			if (wait(&status) < 0) {
				if (errno == EINTR) {
					i--;
					continue;
				}
				die("wait");
			}
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "pingpong: a task failed\n");
				exit(1);
			}
		}
	}
	total = now_s() - t0;

	for (i = 0; i < opt_pairs; i++)
		sum_done += done[i];
	mean_done = (double)sum_done / opt_pairs;
	printf("Total time: %.3f [sec]\n", total);
	if (opt_seconds > 0)
		printf("usecs/op: %.6f\n", mean_done > 0 ? opt_seconds * 1e6 / mean_done : 0.0);
	else
		printf("usecs/op: %.6f\n", total * 1e6 / (double)opt_loops);
	printf("ops/sec: %.0f\n", (double)sum_done / total);
	for (i = 0; i < opt_pairs; i++)
		printf("pair %d: %.3f s %ld round trips %.3f usecs/op\n", i, elapsed[i],
		       done[i], done[i] ? elapsed[i] * 1e6 / (double)done[i] : 0.0);
	return 0;
}
