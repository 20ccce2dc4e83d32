// Command scale measures how the relay scales with instances, over
// loopback, with no browser: what an idle instance costs (memory,
// goroutines, the time to accept its extension), and the latency and CPU of
// many instances each with a busy CDP client.
//
// The relay runs in this process, as the product assembles it
// (internal/app: the ingress guard, audit and metrics in front of the
// relay), or with -bare the relay alone; the extensions and clients run in
// a child process (this binary again, with -peer), so that the memory and
// CPU figures are the relay's own and not the load's.
//
//	scale -scenario idle -n 10000
//	scale -scenario active -n 100 -rates 250,500,1000
//	scale -smoke      a few seconds of both scenarios; non-zero on failure
package main
