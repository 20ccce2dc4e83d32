// Package app is the one assembly of the product: what `cdprelay serve`
// runs, built from one Config. New wires the Prometheus registry, the
// audit log (fed by the relay through one observer), the relay, the live
// view, the operator's endpoints (metrics, /v1/audit, /v1/instances) and,
// in front of everything, the ingress guard, with TLS when configured.
//
// Requests are routed by the route table of internal/routes, the same
// table the guard judges them by: the guard asks for the scope of the
// handler that then serves the request. The relay's own endpoints
// (discovery, CDP, extension, minting) go to the relay; the operator's to
// the handlers here; everything else to the live view, which serves its
// page and answers 404 for the rest.
//
// The command (cmd/cdprelay) is flags, the config file, signals and the
// launched browser around an App; the developer tools (tools/) build the
// same App, so that what they measure is what runs.
package app
