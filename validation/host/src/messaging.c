// SPDX-License-Identifier: GPL-2.0-only
/*
 * messaging.c - a hackbench / "perf bench sched messaging" style workload,
 * written from scratch for fairsim's host validation data.
 *
 * G groups; each group has F receivers and F senders (F = 20 by default).
 * Every receiver owns one channel (a pipe, or one end of an AF_UNIX stream
 * socketpair). Every sender writes L messages of 100 bytes to every
 * receiver of its group, i.e. for l in 0..L-1: for r in 0..F-1: write(r).
 * A receiver reads until it got F * L * 100 bytes, then exits.
 *
 * All workers first report "ready" through one pipe, then block in poll()
 * on a "go" pipe; the clock starts just before main writes the go byte and
 * stops once every worker has been reaped (processes) or joined (threads).
 *
 * usage: messaging [-g groups] [-l loops] [-f fds] [-p] [-T]
 *   -g  number of groups (default 10)
 *   -l  messages per sender per receiver (default 100)
 *   -f  senders and receivers per group (default 20)
 *   -p  use pipes (default: AF_UNIX SOCK_STREAM socketpairs)
 *   -T  use threads instead of processes
 *
 * Output (stdout), hackbench style:
 *   Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)
 *   Each sender will pass 100 messages of 100 bytes
 *   Time: 0.123
 *
 * gcc -O2 -Wall -W messaging.c -o messaging -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_BYTES 100

static int opt_groups = 10;
static int opt_loops = 100;
static int opt_fds = 20;
static int opt_pipe;
static int opt_threads;

/* ready_wr: workers write one byte when set up; go_rd: workers poll it */
static int ready_pipe[2];
static int go_pipe[2];

struct worker {
	int is_sender;
	int in_fd;      /* receiver: the channel it reads */
	int *out_fds;   /* sender: the group's channels, opt_fds of them */
	pthread_t thread;
	pid_t pid;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void full_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		p += n;
		len -= (size_t)n;
	}
}

/* tell main we are set up, then wait until it says go */
static void ready_then_wait(void)
{
	struct pollfd pfd = { .fd = go_pipe[0], .events = POLLIN };
	char c = 'r';

	full_write(ready_pipe[1], &c, 1);
	while (poll(&pfd, 1, -1) < 0) {
		if (errno != EINTR)
			die("poll");
	}
}

static void run_sender(struct worker *w)
{
	char msg[MSG_BYTES];
	int l, r;

	memset(msg, 's', sizeof(msg));
	ready_then_wait();
	for (l = 0; l < opt_loops; l++)
		for (r = 0; r < opt_fds; r++)
			full_write(w->out_fds[r], msg, sizeof(msg));
}

static void run_receiver(struct worker *w)
{
	char buf[MSG_BYTES];
	unsigned long want = (unsigned long)opt_fds * opt_loops * MSG_BYTES;
	unsigned long got = 0;

	ready_then_wait();
	while (got < want) {
		/* read at most one message at a time, like hackbench */
		ssize_t n = read(w->in_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		if (n == 0) {
			fprintf(stderr, "receiver: early EOF after %lu of %lu bytes\n",
				got, want);
			exit(1);
		}
		got += (unsigned long)n;
	}
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;

	if (w->is_sender)
		run_sender(w);
	else
		run_receiver(w);
	return NULL;
}

static void make_channel(int fds[2])
{
	if (opt_pipe) {
		if (pipe(fds) < 0)
			die("pipe");
	} else {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0)
			die("socketpair");
	}
}

static void start_worker(struct worker *w, int close_fd)
{
	if (opt_threads) {
		pthread_attr_t attr;
		int ret;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		ret = pthread_create(&w->thread, &attr, thread_main, w);
		if (ret) {
			errno = ret;
			die("pthread_create");
		}
		pthread_attr_destroy(&attr);
		return;
	}
	w->pid = fork();
	if (w->pid < 0)
		die("fork");
	if (w->pid == 0) {
		if (close_fd >= 0)
			close(close_fd);
		thread_main(w);
		exit(0);
	}
}

/* creates one group's receivers and senders; returns its worker array */
static struct worker *create_group(void)
{
	struct worker *ws = calloc((size_t)opt_fds * 2, sizeof(*ws));
	int *out_fds = calloc((size_t)opt_fds, sizeof(int));
	int i;

	if (!ws || !out_fds)
		die("calloc");

	for (i = 0; i < opt_fds; i++) {
		int fds[2];

		make_channel(fds);
		ws[i].is_sender = 0;
		ws[i].in_fd = fds[0];
		out_fds[i] = fds[1];
		/* a receiving process does not need the write side */
		start_worker(&ws[i], fds[1]);
		if (!opt_threads)
			close(fds[0]);
	}
	for (i = 0; i < opt_fds; i++) {
		ws[opt_fds + i].is_sender = 1;
		ws[opt_fds + i].out_fds = out_fds;
		start_worker(&ws[opt_fds + i], -1);
	}
	/* in process mode the parent keeps no channel open */
	if (!opt_threads)
		for (i = 0; i < opt_fds; i++)
			close(out_fds[i]);
	return ws;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-g groups] [-l loops] [-f fds] [-p] [-T]\n"
		"  -g  groups (default 10)\n"
		"  -l  messages per sender per receiver (default 100)\n"
		"  -f  senders and receivers per group (default 20)\n"
		"  -p  pipes instead of AF_UNIX socketpairs\n"
		"  -T  threads instead of processes\n", prog);
	exit(1);
}

int main(int argc, char **argv)
{
	struct worker **groups;
	struct timeval start, stop;
	int total, g, i, c;
	char byte;

	while ((c = getopt(argc, argv, "g:l:f:pTh")) != -1) {
		switch (c) {
		case 'g':
			opt_groups = atoi(optarg);
			break;
		case 'l':
			opt_loops = atoi(optarg);
			break;
		case 'f':
			opt_fds = atoi(optarg);
			break;
		case 'p':
			opt_pipe = 1;
			break;
		case 'T':
			opt_threads = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || opt_groups < 1 || opt_loops < 1 || opt_fds < 1)
		usage(argv[0]);

	total = opt_groups * opt_fds * 2;
	printf("Running in %s mode with %d groups using %d file descriptors each (== %d tasks)\n",
	       opt_threads ? "threaded" : "process", opt_groups, opt_fds * 2,
	       total);
	printf("Each sender will pass %d messages of %d bytes\n",
	       opt_loops, MSG_BYTES);
	fflush(stdout);

	if (pipe(ready_pipe) < 0 || pipe(go_pipe) < 0)
		die("pipe");

	groups = calloc((size_t)opt_groups, sizeof(*groups));
	if (!groups)
		die("calloc");
	for (g = 0; g < opt_groups; g++)
		groups[g] = create_group();

	/* wait until every worker is set up */
	for (i = 0; i < total; i++) {
		ssize_t n = read(ready_pipe[0], &byte, 1);

		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n != 1)
			die("read ready");
	}

	gettimeofday(&start, NULL);
	full_write(go_pipe[1], "g", 1);

	if (opt_threads) {
		for (g = 0; g < opt_groups; g++)
			for (i = 0; i < opt_fds * 2; i++)
				pthread_join(groups[g][i].thread, NULL);
	} else {
		for (i = 0; i < total; i++) {
			int status;
			pid_t pid = wait(&status);

			if (pid < 0) {
				if (errno == EINTR) {
					i--;
					continue;
				}
				die("wait");
			}
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "worker %d failed (status 0x%x)\n",
					(int)pid, status);
				exit(1);
			}
		}
	}
	gettimeofday(&stop, NULL);

	printf("Time: %.3f\n", (double)(stop.tv_sec - start.tv_sec) +
	       (double)(stop.tv_usec - start.tv_usec) / 1e6);
	return 0;
}
