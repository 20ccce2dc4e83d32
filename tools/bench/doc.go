// Command bench measures Runtime.evaluate and Page.captureScreenshot
// round trips against one headless Chromium along three paths, in one run:
// (a) Chromium's own debugging port, (b) the cdprelay extension driven by a
// bare protocol-v2 peer, (c) a CDP client through cdprelay, which serves
// the extension's URL in this process: the product as cdprelay serve
// assembles it (internal/app), or with -bare the relay alone. Visits
// alternate a, b, c, a, b, c, ... so that the machine's noise falls on all
// three alike; it prints the figures and writes them, with the Go
// benchmarks' output, to a Markdown file. With -smoke it runs each path and workload a few times and
// reports only whether they all answered.
package main
