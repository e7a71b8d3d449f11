// SPDX-License-Identifier: GPL-2.0-only
/*
 * nanosleep.c - the "nano_sleep <ns>" stress tool of the newidle-balance
 * series (seed 000: "Each process is a loop of nanosleep(1 us)"), written
 * from scratch for fairsim's host validation data.
 *
 * usage: nano_sleep [options] <ns> [seconds]
 *   <ns>        nanoseconds asked of every nanosleep() call
 *   [seconds]   stop after this long (default: forever, until SIGTERM/SIGINT)
 *   -S <ns>     prctl(PR_SET_TIMERSLACK, ns) first (e.g. -S 1); default: the
 *               inherited slack (normally 50000 ns)
 *   -r          record every iteration's actual sleep length (CLOCK_MONOTONIC
 *               around the nanosleep call) and print its percentiles
 *   -c <cpu>    pin to this CPU (sched_setaffinity) before looping
 *   -P <n>      fork n copies (default 1) that run concurrently; the parent
 *               waits for them and prints nothing itself
 *
 * At exit (duration reached, SIGTERM or SIGINT) every instance prints one line:
 *   nano_sleep: pid=123 ns=1000 slack_ns=50000 loops=N elapsed_s=3.000000 mean_iter_us=57.123
 * and with -r a second one (all in microseconds):
 *   nano_sleep: pid=123 sleep_us samples=N mean=.. p50=.. p90=.. p99=.. max=.. overshoot_p50=.. overshoot_p99=..
 *
 * gcc -O2 -Wall -W nanosleep.c -o nano_sleep
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array */
static uint32_t pct(const uint32_t *v, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-S slack_ns] [-r] [-c cpu] [-P copies] <ns> [seconds]\n",
		prog);
	exit(1);
}

static int run_one(long ns, double seconds, long slack, int record, int cpu)
{
	struct timespec req = { .tv_sec = ns / 1000000000L,
				.tv_nsec = ns % 1000000000L };
	uint32_t *samples = NULL;
	size_t nsamples = 0, cap = 0;
	unsigned long long loops = 0;
	uint64_t t0, t_end, a, b;
	long cur_slack;

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	if (slack > 0 && prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) < 0) {
		perror("prctl(PR_SET_TIMERSLACK)");
		return 1;
	}
	cur_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	t0 = now_ns();
	t_end = seconds > 0 ? t0 + (uint64_t)(seconds * 1e9) : UINT64_MAX;

	if (!record) {
		/* the plain loop of the seed, plus a cheap duration check */
		while (!stop_flag) {
			nanosleep(&req, NULL);
			loops++;
			if (t_end != UINT64_MAX && (loops & 63) == 0 &&
			    now_ns() >= t_end)
				break;
		}
	} else {
		a = t0;
		while (!stop_flag) {
			nanosleep(&req, NULL);
			b = now_ns();
			loops++;
			if (nsamples == cap) {
				cap = cap ? cap * 2 : 65536;
				samples = realloc(samples, cap * sizeof(*samples));
				if (!samples) {
					perror("realloc");
					return 1;
				}
			}
			samples[nsamples++] = (uint32_t)((b - a) > UINT32_MAX ?
							 UINT32_MAX : (b - a));
			if (b >= t_end)
				break;
			a = now_ns();
		}
	}

	{
		uint64_t t1 = now_ns();
		double el = (double)(t1 - t0) / 1e9;

		printf("nano_sleep: pid=%d ns=%ld slack_ns=%ld loops=%llu elapsed_s=%.6f mean_iter_us=%.3f\n",
		       (int)getpid(), ns, cur_slack, loops, el,
		       loops ? el * 1e6 / (double)loops : 0.0);
	}
	if (record && nsamples) {
		double sum = 0;
		size_t i;

		for (i = 0; i < nsamples; i++)
			sum += samples[i];
		qsort(samples, nsamples, sizeof(*samples), cmp_u32);
		printf("nano_sleep: pid=%d sleep_us samples=%zu mean=%.3f p50=%.3f p90=%.3f p99=%.3f max=%.3f overshoot_p50=%.3f overshoot_p99=%.3f\n",
		       (int)getpid(), nsamples, sum / (double)nsamples / 1e3,
		       pct(samples, nsamples, 50) / 1e3,
		       pct(samples, nsamples, 90) / 1e3,
		       pct(samples, nsamples, 99) / 1e3,
		       samples[nsamples - 1] / 1e3,
		       ((double)pct(samples, nsamples, 50) - (double)ns) / 1e3,
		       ((double)pct(samples, nsamples, 99) - (double)ns) / 1e3);
	}
	fflush(stdout);
	free(samples);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long ns, slack = 0;
	double seconds = 0;
	int record = 0, cpu = -1, copies = 1, c, i, j, rc = 0;
	pid_t *pids;

	while ((c = getopt(argc, argv, "S:rc:P:h")) != -1) {
		switch (c) {
		case 'S':
			slack = atol(optarg);
			break;
		case 'r':
			record = 1;
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'P':
			copies = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind < 1 || argc - optind > 2 || copies < 1)
		usage(argv[0]);
	ns = atol(argv[optind]);
	if (ns < 0)
		usage(argv[0]);
	if (argc - optind == 2)
		seconds = atof(argv[optind + 1]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: nanosleep returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (copies == 1)
		return run_one(ns, seconds, slack, record, cpu);

	pids = calloc((size_t)copies, sizeof(*pids));
	if (!pids) {
		perror("calloc");
		return 1;
	}
	for (i = 0; i < copies; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			exit(run_one(ns, seconds, slack, record, cpu));
		pids[i] = pid;
	}
	for (i = 0; i < copies; i++) {
		int status;

		if (wait(&status) < 0) {
			if (errno == EINTR) {
				/* forward the stop request to the copies */
				for (j = 0; j < copies; j++)
					kill(pids[j], SIGTERM);
				i--;
				continue;
			}
			perror("wait");
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	}
	return rc;
}
