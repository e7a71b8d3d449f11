// SPDX-License-Identifier: GPL-2.0-only
/*
 * netpingpong.c - a TCP or UDP ping-pong over loopback (127.0.0.1) between
 * two processes, and a one-way stream, written from scratch for fairsim's
 * host validation data. It measures what the loopback network stack costs
 * per message on this host, next to the pipe ping-pong of pingpong.c.
 *
 * Ping-pong (the default): process A sends a message of -s bytes and waits
 * for the reply of the same size; process B does the reverse. One round
 * trip is one "op", exactly one request and one response, as in netperf's
 * TCP_RR/UDP_RR. TCP sockets set TCP_NODELAY, as netperf's RR tests do.
 *
 * Stream (-m SIZE): process A sends messages of SIZE bytes as fast as it
 * can for -d seconds; process B receives them. For UDP, datagrams that do
 * not fit B's receive buffer are dropped by the kernel, so the sent and the
 * received counts differ, as netperf's UDP_STREAM reports them.
 *
 * usage: netpingpong -p tcp|udp [-s bytes] [-l loops] [-d seconds]
 *                    [-m size] [-C cpuA,cpuB]
 *   -p  protocol (default tcp)
 *   -s  message size of the ping-pong (default 1)
 *   -l  round trips (default 100000); -d runs for a time instead
 *   -m  stream mode with messages of this size
 *   -C  pin A to cpuA and B to cpuB (-C 0,0: one CPU; -C 0,1: across CPUs)
 *
 * Output (stdout), ping-pong:
 *   netpingpong: tcp rr 1 bytes, 100000 round trips, cpus 0,0
 *   Total time: 1.234 [sec]
 *   usecs/op: 12.345678
 * stream:
 *   netpingpong: udp stream 64 bytes, 1.000 s, cpus 0,1
 *   sent: N msgs M bytes  recv: N msgs M bytes
 *   send Mbit/s: X  recv Mbit/s: Y
 *
 * gcc -O2 -Wall -W netpingpong.c -o netpingpong
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int udp;
static long msg_size = 1;
static long loops = 100000;
static double seconds;
static long stream_size;
static int cpu_a = -1, cpu_b = -1;

struct shared {
	volatile int stop;
	long recv_msgs;
	long recv_bytes;
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
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* Receives exactly n bytes (TCP may return less per call; UDP one datagram). */
static int recv_full(int fd, char *buf, long n)
{
	long got = 0;

	while (got < n) {
		ssize_t r = recv(fd, buf + got, n - got, 0);

		if (r <= 0)
			return -1;
		if (udp)
			return 0;
		got += r;
	}
	return 0;
}

/* Two connected sockets over 127.0.0.1: a[0] for A, a[1] for B. */
static void connect_pair(int a[2])
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int type = udp ? SOCK_DGRAM : SOCK_STREAM;
	int l, one = 1;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, type, 0);
	if (l < 0)
		die("socket");
	if (bind(l, (struct sockaddr *)&addr, sizeof(addr)))
		die("bind");
	if (getsockname(l, (struct sockaddr *)&addr, &len))
		die("getsockname");
	a[0] = socket(AF_INET, type, 0);
	if (a[0] < 0)
		die("socket");
	if (udp) {
		struct sockaddr_in mine;

		a[1] = l;
		memset(&mine, 0, sizeof(mine));
		mine.sin_family = AF_INET;
		mine.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(a[0], (struct sockaddr *)&mine, sizeof(mine)))
			die("bind");
		len = sizeof(mine);
		getsockname(a[0], (struct sockaddr *)&mine, &len);
		if (connect(a[0], (struct sockaddr *)&addr, sizeof(addr)))
			die("connect");
		if (connect(a[1], (struct sockaddr *)&mine, sizeof(mine)))
			die("connect");
		return;
	}
	if (listen(l, 1))
		die("listen");
	if (connect(a[0], (struct sockaddr *)&addr, sizeof(addr)))
		die("connect");
	a[1] = accept(l, NULL, NULL);
	if (a[1] < 0)
		die("accept");
	close(l);
	setsockopt(a[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(a[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void run_rr(int fd[2])
{
	char *buf = malloc(msg_size);
	double t0, t;
	long done = 0;
	pid_t b;

	memset(buf, 'x', msg_size);
	b = fork();
	if (b < 0)
		die("fork");
	if (b == 0) {
		pin(cpu_b);
		close(fd[0]);
		for (;;) {
			if (recv_full(fd[1], buf, msg_size))
				_exit(0);
			if (send(fd[1], buf, msg_size, 0) != msg_size)
				_exit(0);
		}
	}
	pin(cpu_a);
	close(fd[1]);
	t0 = now_s();
	for (;;) {
		if (send(fd[0], buf, msg_size, 0) != msg_size)
			die("send");
		if (recv_full(fd[0], buf, msg_size))
			die("recv");
		done++;
		if (seconds > 0 ? (done & 63) == 0 && now_s() - t0 >= seconds : done >= loops)
			break;
	}
	t = now_s() - t0;
	shutdown(fd[0], SHUT_RDWR);
	close(fd[0]);
	kill(b, SIGTERM);
	waitpid(b, NULL, 0);
	printf("netpingpong: %s rr %ld bytes, %ld round trips, cpus %d,%d\n",
	       udp ? "udp" : "tcp", msg_size, done, cpu_a, cpu_b);
	printf("Total time: %.3f [sec]\n", t);
	printf("usecs/op: %.6f\n", t * 1e6 / done);
}

static void run_stream(int fd[2])
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *buf = malloc(stream_size);
	long sent = 0;
	double t0, t;
	pid_t b;

	if (sh == MAP_FAILED)
		die("mmap");
	memset(buf, 'x', stream_size);
	b = fork();
	if (b < 0)
		die("fork");
	if (b == 0) {
		pin(cpu_b);
		close(fd[0]);
		for (;;) {
			ssize_t r = recv(fd[1], buf, stream_size, 0);

			if (r <= 0 || sh->stop)
				break;
			sh->recv_msgs++;
			sh->recv_bytes += r;
		}
		_exit(0);
	}
	pin(cpu_a);
	close(fd[1]);
	if (seconds <= 0)
		seconds = 1;
	t0 = now_s();
	do {
		int k;

		for (k = 0; k < 64; k++) {
			if (send(fd[0], buf, stream_size, 0) == stream_size)
				sent++;
			else if (errno != ENOBUFS && errno != ECONNREFUSED)
				die("send");
		}
	} while (now_s() - t0 < seconds);
	t = now_s() - t0;
	/* The receiver's count is read at the same instant as the sender's. */
	sh->stop = 1;
	{
		long rm = sh->recv_msgs, rb = sh->recv_bytes;

		shutdown(fd[0], SHUT_RDWR);
		close(fd[0]);
		kill(b, SIGTERM);
		waitpid(b, NULL, 0);
		printf("netpingpong: %s stream %ld bytes, %.3f s, cpus %d,%d\n",
		       udp ? "udp" : "tcp", stream_size, t, cpu_a, cpu_b);
		printf("sent: %ld msgs %ld bytes  recv: %ld msgs %ld bytes\n",
		       sent, sent * stream_size, rm, rb);
		printf("send Mbit/s: %.2f  recv Mbit/s: %.2f\n",
		       sent * stream_size * 8 / t / 1e6, rb * 8 / t / 1e6);
	}
}

int main(int argc, char **argv)
{
	int c, fd[2];

	while ((c = getopt(argc, argv, "p:s:l:d:m:C:")) != -1) {
		switch (c) {
		case 'p':
			if (!strcmp(optarg, "udp"))
				udp = 1;
			else if (strcmp(optarg, "tcp"))
				goto usage;
			break;
		case 's':
			msg_size = atol(optarg);
			break;
		case 'l':
			loops = atol(optarg);
			break;
		case 'd':
			seconds = atof(optarg);
			break;
		case 'm':
			stream_size = atol(optarg);
			break;
		case 'C':
			if (sscanf(optarg, "%d,%d", &cpu_a, &cpu_b) != 2)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (msg_size < 1 || msg_size > 65000 || loops < 1 || stream_size < 0 ||
	    stream_size > 65000)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	connect_pair(fd);
	if (stream_size)
		run_stream(fd);
	else
		run_rr(fd);
	return 0;
usage:
	fprintf(stderr, "usage: netpingpong -p tcp|udp [-s bytes] [-l loops] [-d seconds] [-m size] [-C cpuA,cpuB]\n");
	return 2;
}
