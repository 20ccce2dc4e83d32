package ingress

import "github.com/prometheus/client_golang/prometheus"

// outcome is what the guard did with a request; a closed set, so that it
// can label a metric.
type outcome uint8

const (
	outcomeAllowed   outcome = iota
	outcomeHost              // Host is not an allowed name
	outcomeOrigin            // Origin not allowed on this endpoint
	outcomeFetchSite         // Sec-Fetch-Site: cross-site
	outcomeToken             // no token, an unknown one, or a malformed one
	outcomeScope             // a valid token without the endpoint's scope
	outcomePath              // not a clean path
	outcomeOperator          // a tenant's token on an endpoint that is the operator's
	outcomePerson            // a person's action without the person's credential
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"allowed", "host", "origin", "fetch_site", "token", "scope", "path", "operator_only", "person"}

func (o outcome) String() string { return outcomeNames[o] }

// Metrics counts the guard's decisions.
type Metrics struct {
	requests [numEndpoints][numOutcomes]prometheus.Counter // static after NewMetrics
}

// NewMetrics registers the ingress metrics on reg (if reg is not nil).
// Every series exists from the start, at zero.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_ingress_requests_total",
		Help: "HTTP requests and WebSocket upgrades by endpoint class and what the ingress checks decided (allowed, or the reason for the refusal).",
	}, []string{"endpoint", "outcome"})
	m := &Metrics{}
	for e := range numEndpoints {
		for o := range numOutcomes {
			m.requests[e][o] = vec.WithLabelValues(e.String(), o.String())
		}
	}
	if reg != nil {
		reg.MustRegister(vec)
	}
	return m
}

func (m *Metrics) count(e endpoint, o outcome) { m.requests[e][o].Inc() }
