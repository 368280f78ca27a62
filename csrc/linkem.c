/*
 * linkem: a userspace link emulator between two interfaces, for kernels without
 * sch_netem / fq / etf.
 *
 *   linkem --a IFACE --b IFACE [--seed N] [--no-pdeathsig]
 *
 * Frames received on A leave through B (direction "ab") and vice versa ("ba").
 * Per direction: up/down, loss (Bernoulli or Gilbert-Elliott), rate with a
 * bounded tail-drop queue, delay and jitter, in that order, per frame in
 * arrival order. Parameters change at run time through text lines on stdin
 * (one reply line on stdout per line):
 *
 *   set ab|ba [delay_us=N] [jitter_us=N] [loss=F] [ge=0|1] [ge_p=F] [ge_r=F]
 *             [ge_loss_good=F] [ge_loss_bad=F] [rate_bps=N (0 = unlimited)]
 *             [queue=N] [up=0|1]                 -> "ok" | "err <key>: <why>"
 *   get ab|ba                                    -> JSON of that direction's parameters
 *   stats                                        -> JSON counters of both directions
 *   quit                                         -> exit 0 (so does EOF on stdin)
 *
 * A `set` line is validated as a whole: an invalid line changes nothing. Keys
 * absent keep their values. Going down flushes that direction's queue.
 * "ready" is printed once both sockets are set up; start-up errors go to stderr
 * and exit with status 2. An interface that disappears while running ends the
 * process with status 1.
 *
 * Design (and where it deviates from the obvious):
 * - One thread, one ppoll() loop over two AF_PACKET/SOCK_RAW sockets and stdin;
 *   the timeout is the earliest due delivery (CLOCK_MONOTONIC, timer slack 1 ns).
 *   Within SPIN_NS of a due time the loop polls without sleeping.
 * - Batching (CPU): frames are read with recvmmsg() (one clock reading per
 *   batch) and sent with sendmmsg(). While a direction holds frames, its input
 *   port is not polled for POLLIN: a frame arriving now cannot be due before
 *   the frames already queued (deliveries are FIFO), and its arrival time is
 *   the kernel's timestamp, so it is read at the next wake-up (the queue head's
 *   delivery, at most RX_DEFER_MAX_NS away) with the same outcome and one
 *   wake-up instead of two. Only when that delivery is more than
 *   RX_DEFER_MIN_NS away: a wake-up due sooner would cost an extra read. Before a control line is handled both ports are
 *   drained, so `set`/`stats` see every frame that arrived before the line.
 * - Sockets are created with protocol 0 and only then bound with ETH_P_ALL to
 *   their interface, so they never see other interfaces' frames.
 *   PACKET_IGNORE_OUTGOING keeps linkem from re-reading its own transmissions
 *   (frames marked PACKET_OUTGOING are skipped too, for kernels without it).
 * - Arrival time is the kernel's receive timestamp (SO_TIMESTAMPNS, realtime,
 *   converted to monotonic), not the time linkem gets to read the frame: if
 *   linkem is descheduled for a while on a busy machine, the delay line and the
 *   rate limiter still see when each frame really arrived (clamped to the last
 *   second and to arrival order).
 * - Rate: departure = max(arrival, previous departure) + bytes*8/rate (frame
 *   bytes as on the wire without preamble/FCS). A frame arriving while `queue`
 *   frames still wait for serialisation (departure > arrival) is tail-dropped.
 *   A rate change applies to frames arriving after it (like netem). Without a
 *   rate, departure = max(arrival, previous departure): equal to the arrival
 *   except right after a rate was removed, when frames still queued go first.
 * - Delay: delivery = departure + delay + N(0, jitter), the normal sample
 *   clamped so that delay + jitter >= 0 (netem-like "truncated at 0"), then
 *   delivery = max(delivery, previous delivery): a FIFO, never reorders.
 * - Each direction is a FIFO (power-of-two ring of malloc'd frame copies) that
 *   grows up to FIFO_MAX_FRAMES frames / FIFO_MAX_BYTES bytes; beyond that a
 *   frame is dropped as drop_queue. The cap is 131072 frames (not 65536) so
 *   that 1 Gbit/s x 1 s of delay in MTU frames (83k frames) still fits.
 * - Frames longer than MAX_FRAME (9216) are dropped and counted in
 *   drop_oversize; other odd frames are copied as they are. A send that fails
 *   for good (e.g. the interface is down) is counted in tx_err; a send that
 *   fails with EAGAIN/ENOBUFS is retried a little later, up to SEND_RETRIES.
 * - Randomness: xoshiro256** seeded through splitmix64 from --seed, one stream
 *   per direction: runs with the same seed and the same traffic make the same
 *   loss and jitter decisions.
 * - Lifetime: EOF on stdin ends the process (its parent's pipe closed, for any
 *   reason, including SIGKILL of the parent). PR_SET_PDEATHSIG(SIGTERM) is set
 *   as well; Linux sends it when the *thread* that forked linkem exits, so a
 *   parent starting linkem from a short-lived thread passes --no-pdeathsig and
 *   relies on stdin EOF alone. SIGTERM/SIGINT/SIGHUP end it cleanly (status 0).
 * - Extra counters beyond rx/tx/drops: rx_bytes, drop_oversize, tx_err.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define MAX_FRAME 9216u
#define RXBUF_SIZE (MAX_FRAME + 1u)
#define FIFO_MIN_FRAMES 1024u
#define FIFO_MAX_FRAMES (1u << 17)
#define FIFO_MAX_BYTES (256ull << 20)
#define SOCK_BUF_BYTES (32 << 20)
#define SPIN_NS 30000LL
#define RX_VLEN 32          /* frames per recvmmsg() */
#define RX_MAX_PER_WAKE 1024 /* frames read from one port per loop turn */
#define TX_VLEN 32          /* frames per sendmmsg() */
#define RX_DEFER_MIN_NS 200000LL
#define RX_DEFER_MAX_NS 5000000LL
#define SEND_RETRY_NS 50000LL
#define SEND_RETRIES 200
#define CTRL_MAX 4096
#define NS_PER_S 1000000000LL

#define MAX_DELAY_US 10000000LL   /* 10 s */
#define MIN_RATE_BPS 1000ULL
#define MAX_RATE_BPS 100000000000ULL /* 100 Gbit/s */
#define MAX_QUEUE 1000000LL

/* ---------------------------------------------------------------- time, rng */

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

struct rng {
	uint64_t s[4];
};

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rng_next(struct rng *r) /* xoshiro256** */
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static double rng_uniform(struct rng *r) /* [0, 1) */
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_normal(struct rng *r) /* N(0, 1), Box-Muller */
{
	double u1 = 1.0 - rng_uniform(r); /* (0, 1] */
	double u2 = rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---------------------------------------------------------------- model */

struct params {
	int64_t delay_us, jitter_us;
	double loss;
	int ge;
	double ge_p, ge_r, ge_loss_good, ge_loss_bad;
	uint64_t rate_bps;
	int64_t queue;
	int up;
};

static const struct params DEFAULT_PARAMS = {
	.delay_us = 0, .jitter_us = 0, .loss = 0.0, .ge = 0, .ge_p = 0.0, .ge_r = 0.0,
	.ge_loss_good = 0.0, .ge_loss_bad = 1.0, .rate_bps = 0, .queue = 100, .up = 1,
};

struct frame {
	int64_t depart, deliver;
	uint32_t len;
	unsigned char data[];
};

struct counters {
	uint64_t rx, rx_bytes, tx, tx_bytes, drop_loss, drop_queue, drop_down, drop_oversize,
		tx_err;
};

struct dir {
	const char *name;
	const char *out_name;
	int out_fd;
	struct params p;
	struct rng rng;
	int ge_bad;
	int64_t last_arrival, last_depart, last_deliver;
	struct frame **ring; /* FIFO: seq s lives at ring[(head + s - head_seq) & (cap - 1)] */
	uint64_t cap, head, count, head_seq, ser_seq;
	uint64_t bytes;
	int64_t retry_at; /* a send would block: try again at this time */
	int retries;
	struct counters c;
};

static struct frame *fifo_at(const struct dir *d, uint64_t seq)
{
	return d->ring[(d->head + (seq - d->head_seq)) & (d->cap - 1)];
}

static bool fifo_grow(struct dir *d)
{
	uint64_t ncap = d->cap ? d->cap * 2 : FIFO_MIN_FRAMES;
	struct frame **nring = malloc(ncap * sizeof *nring);
	if (!nring)
		return false;
	for (uint64_t i = 0; i < d->count; i++)
		nring[i] = d->ring[(d->head + i) & (d->cap - 1)];
	free(d->ring);
	d->ring = nring;
	d->cap = ncap;
	d->head = 0;
	return true;
}

static void fifo_pop(struct dir *d)
{
	struct frame *f = d->ring[d->head];
	d->bytes -= f->len;
	free(f);
	d->head = (d->head + 1) & (d->cap - 1);
	d->head_seq++;
	d->count--;
	if (d->ser_seq < d->head_seq)
		d->ser_seq = d->head_seq;
}

static void fifo_flush(struct dir *d, uint64_t *counter)
{
	while (d->count) {
		fifo_pop(d);
		(*counter)++;
	}
	d->last_depart = 0;
	d->last_deliver = 0;
	d->retry_at = 0;
	d->retries = 0;
}

static bool frame_lost(struct dir *d)
{
	const struct params *p = &d->p;
	if (p->ge) {
		double u = rng_uniform(&d->rng);
		if (d->ge_bad) {
			if (u < p->ge_r)
				d->ge_bad = 0;
		} else if (u < p->ge_p) {
			d->ge_bad = 1;
		}
		double pl = d->ge_bad ? p->ge_loss_bad : p->ge_loss_good;
		return pl > 0.0 && rng_uniform(&d->rng) < pl;
	}
	return p->loss > 0.0 && rng_uniform(&d->rng) < p->loss;
}

static int64_t jitter_ns(struct dir *d)
{
	if (d->p.jitter_us <= 0)
		return 0;
	double j = rng_normal(&d->rng) * (double)d->p.jitter_us * 1000.0;
	double floor_ns = -(double)d->p.delay_us * 1000.0;
	if (j < floor_ns)
		j = floor_ns;
	return (int64_t)llround(j);
}

/* Frames whose serialisation has not finished at time t. */
static uint64_t waiting_for_rate(struct dir *d, int64_t t)
{
	uint64_t tail = d->head_seq + d->count;
	if (d->ser_seq < d->head_seq)
		d->ser_seq = d->head_seq;
	while (d->ser_seq < tail && fifo_at(d, d->ser_seq)->depart <= t)
		d->ser_seq++;
	return tail - d->ser_seq;
}

static void frame_arrived(struct dir *d, const unsigned char *data, size_t len, int64_t t)
{
	d->c.rx++;
	d->c.rx_bytes += len;
	if (len > MAX_FRAME) {
		d->c.drop_oversize++;
		return;
	}
	if (!d->p.up) {
		d->c.drop_down++;
		return;
	}
	if (frame_lost(d)) {
		d->c.drop_loss++;
		return;
	}
	if (t < d->last_arrival)
		t = d->last_arrival;
	d->last_arrival = t;

	int64_t tx_ns = 0;
	if (d->p.rate_bps) {
		if (waiting_for_rate(d, t) >= (uint64_t)d->p.queue) {
			d->c.drop_queue++;
			return;
		}
		tx_ns = (int64_t)(((uint64_t)len * 8u * (uint64_t)NS_PER_S + d->p.rate_bps / 2) /
				  d->p.rate_bps);
	}
	if (d->count >= FIFO_MAX_FRAMES || d->bytes + len > FIFO_MAX_BYTES ||
	    (d->count == d->cap && !fifo_grow(d))) {
		d->c.drop_queue++;
		return;
	}
	struct frame *f = malloc(sizeof *f + len);
	if (!f) {
		d->c.drop_queue++;
		return;
	}
	int64_t depart = (t > d->last_depart ? t : d->last_depart) + tx_ns;
	int64_t deliver = depart + d->p.delay_us * 1000 + jitter_ns(d);
	if (deliver < d->last_deliver)
		deliver = d->last_deliver;
	d->last_depart = depart;
	d->last_deliver = deliver;
	f->depart = depart;
	f->deliver = deliver;
	f->len = (uint32_t)len;
	memcpy(f->data, data, len);
	d->ring[(d->head + d->count) & (d->cap - 1)] = f;
	d->count++;
	d->bytes += len;
}

/* Send every frame that is due; returns false when the output interface is gone. */
static bool transmit_due(struct dir *d, int64_t now)
{
	if (d->retry_at > now)
		return true;
	struct iovec iov[TX_VLEN];
	struct mmsghdr mm[TX_VLEN];
	while (d->count) {
		unsigned due = 0;
		while (due < TX_VLEN && due < d->count) {
			struct frame *f = d->ring[(d->head + due) & (d->cap - 1)];
			if (f->deliver > now)
				break;
			iov[due] = (struct iovec){.iov_base = f->data, .iov_len = f->len};
			mm[due].msg_hdr = (struct msghdr){.msg_iov = &iov[due], .msg_iovlen = 1};
			mm[due].msg_len = 0;
			due++;
		}
		if (!due)
			break;
		int sent = sendmmsg(d->out_fd, mm, due, MSG_DONTWAIT);
		if (sent > 0) {
			for (int i = 0; i < sent; i++) {
				d->c.tx++;
				d->c.tx_bytes += d->ring[d->head]->len;
				fifo_pop(d);
			}
			d->retries = 0;
			d->retry_at = 0;
			continue;
		}
		/* The first frame failed: handle its error as a single send would. */
		{
			int e = sent == 0 ? EAGAIN : errno;
			if (e == EINTR)
				continue;
			if ((e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) &&
			    d->retries < SEND_RETRIES) {
				d->retries++;
				d->retry_at = now + SEND_RETRY_NS;
				return true;
			}
			if (e == ENODEV || e == ENXIO) {
				fprintf(stderr, "linkem: interface %s is gone: %s\n", d->out_name,
					strerror(e));
				return false;
			}
			d->c.tx_err++;
		}
		d->retries = 0;
		d->retry_at = 0;
		fifo_pop(d);
	}
	return true;
}

/* ---------------------------------------------------------------- sockets */

struct port {
	const char *name;
	int ifindex;
	int fd;
	struct dir *in; /* the direction whose frames arrive on this port */
};

static int open_port(struct port *pt)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "linkem: cannot open a packet socket for %s: %s%s\n", pt->name,
			strerror(errno),
			errno == EPERM ? " (needs root or CAP_NET_RAW)" : "");
		return -1;
	}
	int one = 1, size = SOCK_BUF_BYTES;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) < 0)
		fprintf(stderr, "linkem: %s: PACKET_IGNORE_OUTGOING unsupported (%s), "
				"filtering by packet type\n",
			pt->name, strerror(errno));
	(void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);

	struct sockaddr_ll sll = {0};
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = pt->ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
		fprintf(stderr, "linkem: cannot bind to interface %s: %s\n", pt->name,
			strerror(errno));
		close(fd);
		return -1;
	}
	struct packet_mreq mr = {0};
	mr.mr_ifindex = pt->ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) {
		fprintf(stderr, "linkem: cannot make %s promiscuous: %s\n", pt->name,
			strerror(errno));
		close(fd);
		return -1;
	}
	pt->fd = fd;
	return 0;
}

static int64_t cmsg_realtime_ns(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof ts);
			return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
		}
	}
	return 0;
}

static unsigned char rxbuf[RX_VLEN][RXBUF_SIZE];

/* Read what is waiting (up to RX_MAX_PER_WAKE frames); false when the interface is gone. */
static bool receive_port(struct port *pt)
{
	struct sockaddr_ll from[RX_VLEN];
	struct iovec iov[RX_VLEN];
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec)) + 64];
		struct cmsghdr align;
	} cbuf[RX_VLEN];
	struct mmsghdr mm[RX_VLEN];
	for (int got = 0; got < RX_MAX_PER_WAKE;) {
		for (int i = 0; i < RX_VLEN; i++) {
			iov[i] = (struct iovec){.iov_base = rxbuf[i], .iov_len = RXBUF_SIZE};
			mm[i].msg_hdr = (struct msghdr){
				.msg_name = &from[i], .msg_namelen = sizeof from[i],
				.msg_iov = &iov[i], .msg_iovlen = 1,
				.msg_control = cbuf[i].buf, .msg_controllen = sizeof cbuf[i].buf,
			};
			mm[i].msg_len = 0;
		}
		int n = recvmmsg(pt->fd, mm, RX_VLEN, MSG_TRUNC | MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return true;
			if (errno == ENODEV || errno == ENXIO) {
				fprintf(stderr, "linkem: interface %s is gone: %s\n", pt->name,
					strerror(errno));
				return false;
			}
			return true; /* e.g. ENETDOWN: reported once, the socket stays usable */
		}
		int64_t mono = clock_ns(CLOCK_MONOTONIC);
		int64_t real = clock_ns(CLOCK_REALTIME);
		for (int i = 0; i < n; i++) {
			struct msghdr *msg = &mm[i].msg_hdr;
			if (msg->msg_namelen > offsetof(struct sockaddr_ll, sll_pkttype) &&
			    from[i].sll_pkttype == PACKET_OUTGOING)
				continue;
			int64_t t = mono;
			int64_t stamp = cmsg_realtime_ns(msg);
			if (stamp > 0) {
				int64_t age = real - stamp;
				if (age >= 0 && age < NS_PER_S)
					t = mono - age;
			}
			frame_arrived(pt->in, rxbuf[i], (size_t)mm[i].msg_len, t);
		}
		got += n;
		if (n < RX_VLEN)
			return true;
	}
	return true;
}

/* After POLLERR: fetch (and clear) the socket error; false if the interface is gone. */
static bool check_port_error(struct port *pt)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(pt->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
	    (err == ENODEV || err == ENXIO)) {
		fprintf(stderr, "linkem: interface %s is gone: %s\n", pt->name, strerror(err));
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- control */

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static volatile sig_atomic_t stop_signal;
static bool stdout_broken;

static void reply(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (fflush(stdout) != 0)
		stdout_broken = true;
}

static bool parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool parse_prob(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.0 || v > 1.0)
		return false;
	*out = v;
	return true;
}

/* Apply one key=value to *p; NULL on success, else the reason. */
static const char *set_key(struct params *p, const char *key, const char *val)
{
	long long v;
	if (!strcmp(key, "delay_us") || !strcmp(key, "jitter_us")) {
		if (!parse_int(val, 0, MAX_DELAY_US, &v))
			return "must be an integer 0..10000000";
		*(key[0] == 'd' ? &p->delay_us : &p->jitter_us) = v;
	} else if (!strcmp(key, "loss")) {
		if (!parse_prob(val, &p->loss))
			return "must be a number 0..1";
	} else if (!strcmp(key, "ge_p")) {
		if (!parse_prob(val, &p->ge_p))
			return "must be a number 0..1";
	} else if (!strcmp(key, "ge_r")) {
		if (!parse_prob(val, &p->ge_r))
			return "must be a number 0..1";
	} else if (!strcmp(key, "ge_loss_good")) {
		if (!parse_prob(val, &p->ge_loss_good))
			return "must be a number 0..1";
	} else if (!strcmp(key, "ge_loss_bad")) {
		if (!parse_prob(val, &p->ge_loss_bad))
			return "must be a number 0..1";
	} else if (!strcmp(key, "ge") || !strcmp(key, "up")) {
		if (!parse_int(val, 0, 1, &v))
			return "must be 0 or 1";
		*(key[0] == 'g' ? &p->ge : &p->up) = (int)v;
	} else if (!strcmp(key, "rate_bps")) {
		if (!parse_int(val, 0, (long long)MAX_RATE_BPS, &v) ||
		    (v != 0 && (unsigned long long)v < MIN_RATE_BPS))
			return "must be 0 (unlimited) or an integer 1000..100000000000";
		p->rate_bps = (uint64_t)v;
	} else if (!strcmp(key, "queue")) {
		if (!parse_int(val, 1, MAX_QUEUE, &v))
			return "must be an integer 1..1000000";
		p->queue = v;
	} else {
		return "unknown key";
	}
	return NULL;
}

static struct dir *find_dir(struct dir dirs[2], const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < 2; i++)
		if (!strcmp(dirs[i].name, name))
			return &dirs[i];
	return NULL;
}

static void cmd_set(struct dir dirs[2], char *args)
{
	char *save;
	struct dir *d = find_dir(dirs, strtok_r(args, " \t", &save));
	if (!d) {
		reply("err direction: must be ab or ba");
		return;
	}
	struct params np = d->p;
	for (char *tok = strtok_r(NULL, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			reply("err %.64s: expected key=value", tok);
			return;
		}
		*eq = '\0';
		const char *why = set_key(&np, tok, eq + 1);
		if (why) {
			reply("err %.64s: %s, got '%.64s'", tok, why, eq + 1);
			return;
		}
	}
	if (np.ge && !d->p.ge)
		d->ge_bad = 0; /* Gilbert-Elliott (re)starts in the good state */
	bool going_down = d->p.up && !np.up;
	d->p = np;
	if (going_down)
		fifo_flush(d, &d->c.drop_down);
	reply("ok");
}

static void cmd_get(struct dir dirs[2], char *args)
{
	char *save;
	struct dir *d = find_dir(dirs, strtok_r(args, " \t", &save));
	if (!d) {
		reply("err direction: must be ab or ba");
		return;
	}
	const struct params *p = &d->p;
	reply("{\"delay_us\": %" PRId64 ", \"jitter_us\": %" PRId64 ", \"loss\": %.17g, "
	      "\"ge\": %d, \"ge_p\": %.17g, \"ge_r\": %.17g, \"ge_loss_good\": %.17g, "
	      "\"ge_loss_bad\": %.17g, \"rate_bps\": %" PRIu64 ", \"queue\": %" PRId64
	      ", \"up\": %d}",
	      p->delay_us, p->jitter_us, p->loss, p->ge, p->ge_p, p->ge_r, p->ge_loss_good,
	      p->ge_loss_bad, p->rate_bps, p->queue, p->up);
}

static void cmd_stats(struct dir dirs[2])
{
	char out[2048];
	size_t n = 0;
	n += (size_t)snprintf(out + n, sizeof out - n, "{");
	for (int i = 0; i < 2; i++) {
		const struct counters *c = &dirs[i].c;
		n += (size_t)snprintf(
			out + n, sizeof out - n,
			"%s\"%s\": {\"rx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"tx_bytes\": %" PRIu64 ", \"drop_loss\": %" PRIu64
			", \"drop_queue\": %" PRIu64 ", \"drop_down\": %" PRIu64
			", \"drop_oversize\": %" PRIu64 ", \"tx_err\": %" PRIu64
			", \"queued\": %" PRIu64 "}",
			i ? ", " : "", dirs[i].name, c->rx, c->rx_bytes, c->tx, c->tx_bytes,
			c->drop_loss, c->drop_queue, c->drop_down, c->drop_oversize, c->tx_err,
			dirs[i].count);
	}
	reply("%s}", out);
}

/* Handle one control line; returns false on quit. */
static bool control_line(struct dir dirs[2], char *line)
{
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		line[--len] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	char *args = line + strcspn(line, " \t");
	if (*args)
		*args++ = '\0';
	if (!strcmp(line, "set"))
		cmd_set(dirs, args);
	else if (!strcmp(line, "get"))
		cmd_get(dirs, args);
	else if (!strcmp(line, "stats") && !*args)
		cmd_stats(dirs);
	else if (!strcmp(line, "quit") && !*args) {
		reply("ok");
		return false;
	} else
		reply("err command: expected set, get, stats or quit");
	return true;
}

struct ctrl {
	char buf[CTRL_MAX];
	size_t len;
	bool overlong; /* discarding the rest of a line that did not fit */
};

/* Read what stdin has; returns false on EOF/quit. */
static bool control_read(struct ctrl *cb, struct dir dirs[2])
{
	ssize_t n = read(STDIN_FILENO, cb->buf + cb->len, sizeof cb->buf - cb->len - 1);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
	if (n == 0)
		return false;
	cb->len += (size_t)n;
	cb->buf[cb->len] = '\0';
	char *start = cb->buf;
	char *nl;
	while ((nl = memchr(start, '\n', cb->len - (size_t)(start - cb->buf)))) {
		*nl = '\0';
		bool go = true;
		if (cb->overlong) {
			cb->overlong = false;
			reply("err line: longer than %d bytes", CTRL_MAX - 2);
		} else {
			go = control_line(dirs, start);
		}
		start = nl + 1;
		if (!go || stdout_broken)
			return false;
	}
	cb->len -= (size_t)(start - cb->buf);
	memmove(cb->buf, start, cb->len);
	if (cb->len == sizeof cb->buf - 1) { /* no newline in a full buffer */
		cb->overlong = true;
		cb->len = 0;
	}
	return true;
}

/* ---------------------------------------------------------------- main */

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: linkem --a IFACE --b IFACE [--seed N] [--no-pdeathsig]\n"
		   "Emulates a link between IFACE a and IFACE b (see the header of csrc/linkem.c);\n"
		   "control lines on stdin: set ab|ba key=value..., get ab|ba, stats, quit.\n");
}

static void dir_init(struct dir *d, const char *name, const char *out_name, int out_fd,
		     uint64_t seed, uint64_t stream)
{
	memset(d, 0, sizeof *d);
	d->name = name;
	d->out_name = out_name;
	d->out_fd = out_fd;
	d->p = DEFAULT_PARAMS;
	rng_seed(&d->rng, seed, stream);
}

/* When the direction has something to send (INT64_MAX: nothing queued). */
static int64_t dir_wakeup(const struct dir *d)
{
	if (!d->count)
		return INT64_MAX;
	int64_t t = d->ring[d->head]->deliver;
	return d->retry_at > t ? d->retry_at : t;
}

static int64_t next_wakeup(struct dir dirs[2])
{
	int64_t a = dir_wakeup(&dirs[0]), b = dir_wakeup(&dirs[1]);
	return a < b ? a : b;
}

static int run(struct port ports[2], struct dir dirs[2], const sigset_t *waitmask)
{
	struct ctrl cb = {.len = 0};
	struct pollfd pfd[3] = {
		{.fd = ports[0].fd, .events = POLLIN},
		{.fd = ports[1].fd, .events = POLLIN},
		{.fd = STDIN_FILENO, .events = POLLIN},
	};
	while (!stop_signal) {
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		int64_t next = next_wakeup(dirs);
		/* A port whose direction holds frames due later than RX_DEFER_MIN_NS is
		 * read at that direction's next delivery (or after RX_DEFER_MAX_NS), not
		 * on each arrival. */
		bool deferred[2];
		int64_t defer_until = now + RX_DEFER_MAX_NS;
		for (int i = 0; i < 2; i++) {
			deferred[i] = ports[i].in->count > 0 &&
				      dir_wakeup(ports[i].in) - now > RX_DEFER_MIN_NS;
			pfd[i].events = deferred[i] ? 0 : POLLIN;
			if (deferred[i] && next > defer_until)
				next = defer_until;
		}
		struct timespec ts, *tsp = NULL;
		if (next != INT64_MAX) {
			int64_t rem = next - now;
			if (rem < SPIN_NS)
				rem = 0;
			ts.tv_sec = rem / NS_PER_S;
			ts.tv_nsec = rem % NS_PER_S;
			tsp = &ts;
		}
		int n = ppoll(pfd, 3, tsp, waitmask);
		if (n < 0 && errno != EINTR) {
			perror("linkem: ppoll");
			return 1;
		}
		if (stop_signal)
			break;
		bool ctrl = n > 0 && (pfd[2].revents & (POLLIN | POLLHUP | POLLERR));
		now = clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < 2; i++) {
			short ev = n > 0 ? pfd[i].revents : 0;
			if ((ev & POLLERR) && !check_port_error(&ports[i]))
				return 1;
			if (ev & POLLNVAL)
				return 1;
			bool rx = (ev & POLLIN) || ctrl ||
				  (deferred[i] &&
				   (dir_wakeup(ports[i].in) <= now || now >= defer_until));
			if (rx && !receive_port(&ports[i]))
				return 1;
		}
		if (n > 0) {
			if (ctrl) {
				if (!control_read(&cb, dirs))
					return stdout_broken ? 1 : 0;
			}
			if (pfd[2].revents & POLLNVAL)
				return 0;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < 2; i++)
			if (!transmit_due(&dirs[i], now))
				return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *ifa = NULL, *ifb = NULL;
	uint64_t seed = 0;
	bool pdeathsig = true;
	static const struct option opts[] = {
		{"a", required_argument, NULL, 'a'},
		{"b", required_argument, NULL, 'b'},
		{"seed", required_argument, NULL, 's'},
		{"no-pdeathsig", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'a': ifa = optarg; break;
		case 'b': ifb = optarg; break;
		case 's':
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end) {
				fprintf(stderr, "linkem: --seed: not an integer: %s\n", optarg);
				return 2;
			}
			break;
		case 'P': pdeathsig = false; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!ifa || !ifb || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(ifa, ifb)) {
		fprintf(stderr, "linkem: --a and --b are the same interface: %s\n", ifa);
		return 2;
	}
	struct port ports[2] = {{.name = ifa, .fd = -1}, {.name = ifb, .fd = -1}};
	for (int i = 0; i < 2; i++) {
		ports[i].ifindex = (int)if_nametoindex(ports[i].name);
		if (!ports[i].ifindex) {
			fprintf(stderr, "linkem: no such interface: %s\n", ports[i].name);
			return 2;
		}
	}
	if (pdeathsig) {
		pid_t parent = getppid();
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent) /* the parent died before the prctl */
			return 0;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	signal(SIGPIPE, SIG_IGN);

	/* Signals that end the loop are blocked except inside ppoll(). */
	sigset_t block, waitmask;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	for (int i = 0; i < 2; i++)
		if (open_port(&ports[i]) < 0)
			return 2;
	struct dir dirs[2];
	dir_init(&dirs[0], "ab", ifb, ports[1].fd, seed, 1);
	dir_init(&dirs[1], "ba", ifa, ports[0].fd, seed, 2);
	ports[0].in = &dirs[0];
	ports[1].in = &dirs[1];

	reply("ready");
	int rc = run(ports, dirs, &waitmask);
	for (int i = 0; i < 2; i++) {
		uint64_t dummy = 0;
		fifo_flush(&dirs[i], &dummy);
		free(dirs[i].ring);
		close(ports[i].fd);
	}
	return rc;
}
