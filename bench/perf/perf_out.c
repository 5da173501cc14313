/* SPDX-License-Identifier: MIT */
/*
 * perf_out.c - see perf_out.h. Numbers go out with %.3f (nanosecond
 * resolution in microseconds); JSON has no NaN or Inf because the
 * statistics refuse to summarise an empty run.
 */
#include <sched.h>
#include <unistd.h>

#include "perf_out.h"
#include "pin_auto.h"
#include "config.h"

static int rows; /* rows printed so far, for JSON commas */

static const char *out_cm(const struct perf_ep *ep)
{
	return ep->prm.use_cm || ep->prm.mcast_group ? "rdma_cm" : "tcp";
}

static int is_ud_bw(const struct perf_opts *o)
{
	return o->tool == PERF_TOOL_BW && o->conn == PERF_UD;
}

static const char *clock_name(void)
{
	return perf_clock.kind == PERF_CLOCK_TSC ? "tsc" : "monotonic";
}

/* The CPU this process polls on: --pin's, else where it runs now. */
static int out_cpu(const struct perf_opts *o)
{
	if (o->pin_auto)
		return (int)o->pin_choice.cpu;
	return o->pin_cpu >= 0 ? o->pin_cpu : sched_getcpu();
}

static const char *out_pin(const struct perf_opts *o)
{
	return o->pin_auto ? "auto" : o->pin_cpu >= 0 ? "cpu" : "none";
}

/* --pin auto's measurement (pin_auto.h), or none for a CPU by number. */
static void json_cpu(FILE *f, const struct perf_opts *o)
{
	fprintf(f, "\"pin\":\"%s\",", out_pin(o));
	pin_auto_json(f, out_cpu(o), o->pin_auto ? &o->pin_choice : NULL);
}

static void text_cpu(FILE *f, const struct perf_opts *o)
{
	fprintf(f, " CPU            : ");
	pin_auto_text(f, out_cpu(o), o->pin_auto ? &o->pin_choice : NULL,
		      o->pin_cpu >= 0 ? "--pin" : "not pinned");
	fputc('\n', f);
}

static void json_begin(FILE *f, const struct perf_opts *o,
		       const struct perf_ep *ep)
{
	fprintf(f, "{\"tool\":\"%s\",\"version\":\"%s\",\"device\":\"%s\","
		"\"port\":%u,\"transport\":\"%s\",\"connection\":\"%s\","
		"\"verb\":\"%s\",\"cm\":\"%s\",\"gid_index\":%d,"
		"\"mtu\":%u,\"max_inline\":%u,\"clock\":\"%s\","
		"\"tsc_mhz\":%.3f,\"clock_read_ns\":%.1f,\"tx_depth\":%u,\"rx_depth\":%u,"
		"\"cq_mod\":%u,\"post_list\":%u,\"events\":%s,"
		"\"bidirectional\":%s,\"warmup\":%llu,\"rate\":%llu,"
		"\"sample\":%u,\"mcast_group\":\"%s\",",
		o->prog, PACKAGE_VERSION, ep->dev_name, ep->port,
		perf_transport_name(ep->transport), perf_conn_name(o->conn),
		perf_verb_name(o->verb), out_cm(ep),
		ep->transport == PERF_TR_IWARP ? -1 : ep->gid_idx,
		ep->mtu_bytes, ep->max_inline, clock_name(), perf_clock.tsc_mhz,
		perf_clock.read_ns,
		o->tx_depth, o->rx_depth, o->cq_mod, o->post_list,
		o->events ? "true" : "false", o->bidir ? "true" : "false",
		(unsigned long long)o->warmup, (unsigned long long)o->rate,
		o->rate ? o->sample : 0, o->mcast ? o->mcast : "");
	json_cpu(f, o);
	fprintf(f, "\"results\":[");
}

static void text_begin(FILE *f, const struct perf_opts *o,
		       const struct perf_ep *ep)
{
	const char *line = "---------------------------------------------------------------------------------------";

	fprintf(f, "%s\n", line);
	fprintf(f, "                    %s %s %s test (msgaccel %s)\n",
		perf_conn_name(o->conn), perf_verb_name(o->verb),
		o->tool == PERF_TOOL_LAT ? "latency" : "bandwidth",
		PACKAGE_VERSION);
	fprintf(f, " Device         : %s port %u (%s)\n", ep->dev_name,
		ep->port, perf_transport_name(ep->transport));
	fprintf(f, " Connection     : %s, %s exchange, MTU %u, GID index %d\n",
		perf_conn_name(o->conn), out_cm(ep), ep->mtu_bytes,
		ep->transport == PERF_TR_IWARP ? -1 : ep->gid_idx);
	fprintf(f, " Queues         : tx %u, rx %u, CQ moderation %u, post list %u, max inline %u\n",
		o->tx_depth, o->rx_depth, o->cq_mod, o->post_list,
		ep->max_inline);
	text_cpu(f, o);
	fprintf(f, " Completion     : %s; clock %s",
		o->events ? "events" : "busy poll", clock_name());
	if (perf_clock.kind == PERF_CLOCK_TSC)
		fprintf(f, " %.3f MHz", perf_clock.tsc_mhz);
	fprintf(f, " (%s), %.1f ns per read\n", perf_clock.why,
		perf_clock.read_ns);
	if (o->mcast && o->tool == PERF_TOOL_LAT)
		fprintf(f, " Multicast      : to %s, replies to the next address\n",
			o->mcast);
	else if (o->mcast)
		fprintf(f, " Multicast      : to %s\n", o->mcast);
	if (o->rate)
		fprintf(f, " Under load     : %llu msgs/s, reply to every %u\n",
			(unsigned long long)o->rate, o->sample);
	fprintf(f, "%s\n", line);
	if (o->tool == PERF_TOOL_LAT)
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]   99.99%% percentile[usec]\n");
	else if (o->report_gbits)
		fprintf(f, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
	else
		fprintf(f, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
}

/*
 * The old OFED tools' lines (--old-output, or the old -c): rdma_bw began
 * with its parameters, every line led by the process id, so that the
 * output of several runs on one host can be told apart.
 */
static void old_begin(FILE *f, const struct perf_opts *o,
		      const struct perf_ep *ep)
{
	if (o->tool != PERF_TOOL_BW)
		return;
	fprintf(f, "%d: | port=%u | ib_port=%u | size=%u | tx_depth=%u | sl=0 | iters=%llu | duplex=%d | cma=%d |\n",
		(int)getpid(), o->tcp_port, ep->port, o->size, o->tx_depth,
		(unsigned long long)o->iters, o->bidir, ep->prm.use_cm);
}

/* rdma_lat: the median, best and worst half round trip, %g microseconds. */
static void old_lat(FILE *f, const struct lat_summary *s)
{
	fprintf(f, "Latency typical: %g usec\n", s->median);
	fprintf(f, "Latency best   : %g usec\n", s->min);
	fprintf(f, "Latency worst  : %g usec\n", s->max);
}

/* rdma_bw: peak and average in MB (2^20 bytes) per second, %g. */
static void old_bw(FILE *f, const struct perf_bw_result *r)
{
	int pid = (int)getpid();

	fprintf(f, "\n%d: Bandwidth peak: %g MB/sec\n", pid, r->bw_peak_mbps);
	fprintf(f, "%d: Bandwidth average: %g MB/sec\n", pid, r->bw_avg_mbps);
}

void perf_out_begin(FILE *f, const struct perf_opts *o,
		    const struct perf_ep *ep)
{
	rows = 0;
	if (o->old_output)
		old_begin(f, o, ep);
	else if (o->format == PERF_FMT_JSON)
		json_begin(f, o, ep);
	else if (o->format == PERF_FMT_TEXT)
		text_begin(f, o, ep);
	else if (o->tool == PERF_TOOL_LAT)
		fprintf(f, "bytes,iterations,t_min_us,t_max_us,t_median_us,t_avg_us,t_stdev_us,p99_us,p999_us,p9999_us%s\n",
			o->rate ? ",sent,lost" : "");
	else
		fprintf(f, "bytes,iterations,bw_peak_mbps,bw_avg_mbps,msg_rate_mpps%s\n",
			is_ud_bw(o) ? ",sent,received,lost" : "");
	fflush(f);
}

static void json_hist(FILE *f, const struct lat_hist *h)
{
	int first = 1;

	fprintf(f, ",\"histogram\":[");
	for (int b = 0; b < LAT_HIST_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		fprintf(f, "%s{\"lo_us\":%.3f,\"hi_us\":%.3f,\"count\":%llu}",
			first ? "" : ",", b ? lat_hist_lower(b) : 0.0,
			lat_hist_upper(b), (unsigned long long)h->count[b]);
		first = 0;
	}
	fprintf(f, "]");
}

static void text_hist(FILE *f, const struct lat_hist *h)
{
	uint64_t cum = 0;

	fprintf(f, " histogram: [lo, hi) usec      count   cumulative%%\n");
	for (int b = 0; b < LAT_HIST_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		cum += h->count[b];
		fprintf(f, "   %10.3f %10.3f %10llu %12.4f\n",
			b ? lat_hist_lower(b) : 0.0, lat_hist_upper(b),
			(unsigned long long)h->count[b],
			100.0 * (double)cum / (double)h->total);
	}
}

void perf_out_lat(FILE *f, const struct perf_opts *o, uint32_t bytes,
		  const struct lat_summary *s, const struct lat_hist *h,
		  const struct perf_lat_extra *x)
{
	unsigned long long n = (unsigned long long)s->n;

	if (o->old_output) {
		old_lat(f, s);
	} else if (o->format == PERF_FMT_JSON) {
		fprintf(f, "%s{\"bytes\":%u,\"iterations\":%llu,\"t_min_us\":%.3f,"
			"\"t_max_us\":%.3f,\"t_median_us\":%.3f,\"t_avg_us\":%.3f,"
			"\"t_stdev_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,"
			"\"p9999_us\":%.3f",
			rows ? "," : "", bytes, n, s->min, s->max, s->median,
			s->avg, s->stdev, s->p99, s->p999, s->p9999);
		if (o->rate)
			fprintf(f, ",\"sent\":%llu,\"lost\":%llu",
				(unsigned long long)x->sent,
				(unsigned long long)x->lost);
		if (h)
			json_hist(f, h);
		fprintf(f, "}");
	} else if (o->format == PERF_FMT_CSV) {
		fprintf(f, "%u,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f",
			bytes, n, s->min, s->max, s->median, s->avg, s->stdev,
			s->p99, s->p999, s->p9999);
		if (o->rate)
			fprintf(f, ",%llu,%llu", (unsigned long long)x->sent,
				(unsigned long long)x->lost);
		fprintf(f, "\n");
	} else {
		fprintf(f, " %-7u %-10llu %-14.3f %-14.3f %-16.3f %-14.3f %-16.3f %-22.3f %-24.3f %.3f\n",
			bytes, n, s->min, s->max, s->median, s->avg, s->stdev,
			s->p99, s->p999, s->p9999);
		if (o->rate)
			fprintf(f, " under load: %llu sent, %llu sampled replies lost\n",
				(unsigned long long)x->sent,
				(unsigned long long)x->lost);
		if (h)
			text_hist(f, h);
	}
	rows++;
	fflush(f);
}

void perf_out_bw(FILE *f, const struct perf_opts *o, uint32_t bytes,
		 const struct perf_bw_result *r)
{
	unsigned long long n = (unsigned long long)r->iterations;
	/* Gb/s = MB/s * 2^20 * 8 / 1e9 */
	double k = o->report_gbits ? 1048576.0 * 8.0 / 1e9 : 1.0;
	unsigned long long sent = r->sent, rcvd = r->received;
	unsigned long long lost = sent > rcvd ? sent - rcvd : 0;

	if (o->old_output) {
		old_bw(f, r);
	} else if (o->format == PERF_FMT_JSON) {
		fprintf(f, "%s{\"bytes\":%u,\"iterations\":%llu,\"bw_peak_mbps\":%.3f,"
			"\"bw_avg_mbps\":%.3f,\"msg_rate_mpps\":%.6f",
			rows ? "," : "", bytes, n, r->bw_peak_mbps,
			r->bw_avg_mbps, r->msg_rate_mpps);
		if (is_ud_bw(o))
			fprintf(f, ",\"sent\":%llu,\"received\":%llu,\"lost\":%llu",
				sent, rcvd, lost);
		fprintf(f, "}");
	} else if (o->format == PERF_FMT_CSV) {
		fprintf(f, "%u,%llu,%.3f,%.3f,%.6f", bytes, n,
			r->bw_peak_mbps, r->bw_avg_mbps, r->msg_rate_mpps);
		if (is_ud_bw(o))
			fprintf(f, ",%llu,%llu,%llu", sent, rcvd, lost);
		fprintf(f, "\n");
	} else {
		fprintf(f, " %-10u %-14llu %-18.3f %-20.3f %.6f\n", bytes, n,
			r->bw_peak_mbps * k, r->bw_avg_mbps * k,
			r->msg_rate_mpps);
		if (is_ud_bw(o))
			fprintf(f, " UD: %llu sent, %llu received, %llu lost\n",
				sent, rcvd, lost);
	}
	rows++;
	fflush(f);
}

void perf_out_end(FILE *f, const struct perf_opts *o)
{
	if (o->format == PERF_FMT_JSON)
		fprintf(f, "]}\n");
	else if (o->format == PERF_FMT_TEXT && !o->old_output)
		fprintf(f, "---------------------------------------------------------------------------------------\n");
	fflush(f);
}
