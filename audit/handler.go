package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

const (
	// defaultLimit and maxLimit bound one GET /v1/audit answer.
	defaultLimit = 100
	maxLimit     = 1000
	// heartbeat keeps idle follow streams alive through proxies that
	// close quiet connections, and lets a gone client be noticed.
	heartbeat = 15 * time.Second
	// writeWait bounds each write to a follower: a client that stops
	// reading is dropped rather than holding its goroutine forever.
	writeWait = 10 * time.Second
	// maxFollowers bounds the open follow streams (each holds a
	// goroutine); more get 503.
	maxFollowers = 64
)

// Handler serves the ring over HTTP. Mount it at both paths:
//
//	GET /v1/audit?instance=&kind=&since=&limit=
//	GET /v1/audit/follow?instance=&kind=&since=
//
// The first answers JSON: {"records":[...],"oldest":N,"next":N,"gap":bool,
// "overwritten":N}; next is the since for the following request, gap says
// records after since are no longer in the ring (see Query). limit is 100
// by default, at most 1000.
//
// The second is a Server-Sent Events stream: each record is an event with
// "id: <seq>", so that a browser's EventSource resumes after a reconnect
// (Last-Event-ID takes precedence over since); records missed are
// announced by an event of type "gap" whose data is a Gap; a comment line
// every 15 s keeps the connection alive. It ends when the client goes or
// the ring is closed.
//
// Both take tenant= too: only the records of that tenant's instances.
//
// Bad parameters get 400 with a message. The handler does no
// authentication: mount it behind the relay's own checks.
func (rg *Ring) Handler() http.Handler { return rg.HandlerWith(HandlerOptions{}) }

// HandlerOptions scope what Handler answers to the tenant a request acts
// for. The zero value answers everything to everyone.
type HandlerOptions struct {
	// Tenant is the tenant a request acts for; "" is the operator, who
	// reads every record. A tenant reads its own records only, as if the
	// ring held no others. Default: everyone is the operator.
	Tenant func(r *http.Request) string
	// Instance reports whether the instance a request's instance= names
	// exists for the tenant it acts for. One that does not, and of which
	// the ring keeps no record the request may read, is a 404, the same
	// for another tenant's instance as for one that never was. Default:
	// every instance= is answered, matching or not.
	Instance func(r *http.Request, id string) bool
}

// HandlerWith is Handler scoped by opts.
func (rg *Ring) HandlerWith(opts HandlerOptions) http.Handler {
	h := &scoped{rg: rg, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/audit", h.serveQuery)
	mux.HandleFunc("GET /v1/audit/follow", h.serveFollow)
	return mux
}

// scoped is the handler of one HandlerOptions.
type scoped struct {
	rg   *Ring          // static
	opts HandlerOptions // static
}

// filter reads a request's parameters and scopes them to its tenant. ok
// is false when it has answered.
func (h *scoped) filter(w http.ResponseWriter, req *http.Request, withLimit bool) (Filter, bool) {
	f, err := parseFilter(req.URL.Query(), withLimit)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return f, false
	}
	if h.opts.Tenant != nil {
		if t := h.opts.Tenant(req); t != "" {
			if f.Tenant != "" && f.Tenant != t {
				httpError(w, http.StatusBadRequest, "a tenant's token reads its own tenant's records only")
				return f, false
			}
			f.Tenant = t
		}
	}
	if f.Instance != "" && h.opts.Instance != nil && !h.opts.Instance(req, f.Instance) && !h.rg.Names(f.Instance, f.Tenant) {
		http.NotFound(w, req)
		return f, false
	}
	return f, true
}

// queryAnswer is the body of GET /v1/audit.
type queryAnswer struct {
	Records     []Record `json:"records"`
	Oldest      uint64   `json:"oldest"`
	Next        uint64   `json:"next"`
	Gap         bool     `json:"gap"`
	Overwritten uint64   `json:"overwritten"`
}

func (h *scoped) serveQuery(w http.ResponseWriter, req *http.Request) {
	rg := h.rg
	f, ok := h.filter(w, req, true)
	if !ok {
		return
	}
	p := rg.query(f)
	ans := queryAnswer{
		Records:     p.records,
		Oldest:      p.oldest,
		Next:        p.next,
		Gap:         p.gap,
		Overwritten: rg.Overwritten(),
	}
	if ans.Records == nil {
		ans.Records = []Record{}
	}
	body, err := json.Marshal(ans)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "encode audit records: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(body, '\n'))
}

// parseFilter reads the query parameters. Unknown and repeated parameters
// are refused: a misspelt filter must not silently widen the answer.
func parseFilter(q url.Values, withLimit bool) (Filter, error) {
	f := Filter{Limit: defaultLimit}
	for k, vs := range q {
		if len(vs) != 1 {
			return f, fmt.Errorf("parameter %q given %d times", k, len(vs))
		}
		v := vs[0]
		switch k {
		case "instance":
			f.Instance = v
		case "tenant":
			f.Tenant = v
		case "kind":
			f.Kind = Kind(v)
		case "since":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return f, fmt.Errorf("since must be a sequence number (a non-negative integer), not %q", v)
			}
			f.Since = n
		case "limit":
			if !withLimit {
				return f, errors.New("limit does not apply to a follow stream")
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxLimit {
				return f, fmt.Errorf("limit must be an integer from 1 to %d, not %q", maxLimit, v)
			}
			f.Limit = n
		default:
			known := "instance, tenant, kind, since"
			if withLimit {
				known += ", limit"
			}
			return f, fmt.Errorf("unknown parameter %q (known: %s)", k, known)
		}
	}
	return f, nil
}

func httpError(w http.ResponseWriter, code int, msg string) {
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}

func (h *scoped) serveFollow(w http.ResponseWriter, req *http.Request) {
	rg := h.rg
	f, ok := h.filter(w, req, false)
	if !ok {
		return
	}
	if id := req.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID must be a sequence number, not %q", id))
			return
		}
		f.Since = n
	}
	if rg.Followers() >= maxFollowers {
		w.Header().Set("Retry-After", "10")
		httpError(w, http.StatusServiceUnavailable, "too many audit followers")
		return
	}
	rc := http.NewResponseController(w)
	// The server does not clear a write deadline between requests on a
	// kept-alive connection, so the last one set here must not outlive
	// the stream.
	defer rc.SetWriteDeadline(time.Time{})
	sub := rg.Subscribe(f.Since)
	defer sub.Close()

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	// nginx buffers responses by default, which would hold events back.
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}

	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	ctx := req.Context()
	sent := f.Since // the id the client resumes from
	var (
		recs []Record
		out  bytes.Buffer
		err  error
	)
	enc := json.NewEncoder(&out)
	for {
		var gap *Gap
		recs, gap, err = sub.poll(recs)
		if err != nil {
			return
		}
		out.Reset()
		if gap != nil {
			// The id moves the client's Last-Event-ID past what is lost,
			// so that a reconnect does not announce the same gap again.
			sent = gap.Next - 1
			fmt.Fprintf(&out, "id: %d\nevent: gap\ndata: ", sent)
			enc.Encode(gap)
			out.WriteByte('\n')
		}
		for i := range recs {
			r := &recs[i]
			if !f.match(r) {
				continue
			}
			mark := out.Len()
			fmt.Fprintf(&out, "id: %d\ndata: ", r.Seq)
			if enc.Encode(r) != nil {
				out.Truncate(mark)
				continue
			}
			out.WriteByte('\n')
			sent = r.Seq
		}
		if n := len(recs); n > 0 && recs[n-1].Seq > sent {
			// Records the filter skipped: an event with only an id moves
			// the client's Last-Event-ID past them without firing.
			sent = recs[n-1].Seq
			fmt.Fprintf(&out, "id: %d\n\n", sent)
		}
		if out.Len() > 0 {
			if !send(rc, w, out.Bytes()) {
				return
			}
			continue // there may be more than one batch waiting
		}
		select {
		case <-sub.notify:
		case <-rg.done:
		case <-tick.C:
			if !send(rc, w, []byte(": heartbeat\n\n")) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// send writes and flushes b within writeWait.
func send(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	// Not every ResponseWriter supports deadlines (httptest's does not);
	// then the write simply has none.
	_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}
