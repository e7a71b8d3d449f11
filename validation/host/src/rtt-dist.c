/* The noise model's basis (crates/engine/src/noise.rs): per-round-trip times of a pipe
 * ping-pong between two tasks, both pinned to CPU 1 (or the child to argv[2]); prints
 * the percentiles and the coefficient of variation below p99.
 * Build: gcc -O2 -o rtt-dist rtt-dist.c -lm; run: ./rtt-dist 200000 1 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>
#include <sys/wait.h>
static long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
int main(int c,char**v){int N=atoi(v[1]);int cpu2=atoi(v[2]);int a[2],b[2];pipe(a);pipe(b);cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 if(fork()==0){CPU_ZERO(&s);CPU_SET(cpu2,&s);sched_setaffinity(0,sizeof s,&s);char x;for(int i=0;i<N;i++){read(a[0],&x,1);write(b[1],&x,1);}exit(0);}
 long*d=malloc(N*sizeof(long));char x=0;for(int i=0;i<N;i++){long t=ns();write(a[1],&x,1);read(b[0],&x,1);d[i]=ns()-t;}wait(0);
 qsort(d,N,sizeof(long),cmp);double m=0,q=0;int K=N*99/100;for(int i=0;i<K;i++)m+=d[i];m/=K;for(int i=0;i<K;i++)q+=(d[i]-m)*(d[i]-m);q=q/K;
 printf("p1 %ld p10 %ld p50 %ld p90 %ld p99 %ld max %ld mean<p99 %.0f cv<p99 %.3f\n",d[N/100],d[N/10],d[N/2],d[N*9/10],d[N*99/100],d[N-1],m,__builtin_sqrt(q)/m);}
