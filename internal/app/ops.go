package app

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/viewer"
)

// serveStatus is GET /v1/instances: every instance the request may see
// (a tenant's own, or all for the operator) with its tabs, and what the
// live view does with each tab.
func (a *App) serveStatus(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Instances []instanceView `json:"instances"`
	}{Instances: []instanceView{}}
	watches := a.live.Watches()
	for _, in := range a.relay.InstancesOf(requestTenant(r)) {
		out.Instances = append(out.Instances, a.instanceView(in, watches))
	}
	writeJSON(w, out)
}

// servePerson is POST /v1/instances/<id>/stop and /resume: a person's
// brake on an instance's automation, for programs (the live view does the
// same over its socket).
func (a *App) servePerson(w http.ResponseWriter, r *http.Request, rt routes.Route) {
	w.Header().Set("Content-Type", "application/json")
	fail := func(code int, msg string) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if rt.Kind != routes.KindPerson {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, rt.Action+" takes POST")
		return
	}
	// Another tenant's instance is not found, like one that never was,
	// and the answer names neither.
	in := a.InstanceFor(r, rt.InstanceID)
	if in == nil {
		w.Header().Del("Content-Type")
		http.NotFound(w, r)
		return
	}
	by := personActor(r)
	var err error
	if rt.Action == "stop" {
		err = in.Stop(by)
	} else {
		err = in.Resume(by)
	}
	switch {
	case errors.Is(err, relay.ErrStopped), errors.Is(err, relay.ErrNotStopped):
		fail(http.StatusConflict, err.Error())
		return
	case err != nil:
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	// by is who acted: the person or the operator, and the credential.
	stopped, _ := in.Stopped()
	_ = json.NewEncoder(w).Encode(map[string]any{"instance": in.ID(), "stopped": stopped, "by": by})
}

// personActor names who takes a person's action over HTTP, with the
// credential, for the audit log and what the automation is told: the
// person (the person key, or a token of theirs: one that may take over or
// pair a browser) or the operator (an admin token). Never the credential
// itself. The guard has let only these through.
func personActor(r *http.Request) string {
	g, _ := ingress.GrantFrom(r.Context())
	switch {
	case g.PersonKey:
		return "the person (" + ingress.PersonKeyName + ")"
	case g.TokenName != "" && g.Scopes.HasAny(ingress.ScopeSet(ingress.ScopeViewerInteractive|ingress.ScopePair)):
		return "the person (token " + g.TokenName + ")"
	case g.TokenName != "":
		return "the operator (token " + g.TokenName + ")"
	}
	return "the operator"
}

// viewerCredential tells the live view what a viewer presented: the name
// an interactive viewer acts under, and, for one that may only watch,
// why and how the person acts.
func (a *App) viewerCredential(r *http.Request) viewer.Credential {
	g, _ := ingress.GrantFrom(r.Context())
	c := viewer.Credential{Name: g.Who(), KeyRefused: g.KeyRefused}
	link := "open the live-view link cdprelay serve printed when it started (…/#person=…): it carries the person key"
	if f := a.cfg.PersonKeyFile; f != "" {
		link += ", kept in " + f
	} else {
		link += ", made anew at every start"
	}
	switch {
	case r.URL.Query().Get("mode") == "view":
		c.Hint = "This page was opened view-only (?mode=view)."
	case g.KeyRefused:
		c.Hint = "The person key this page kept is not this relay's (a new one is made when its file is removed). To act as the person, " + link + "."
	case g.TokenName != "" && g.Scopes.Has(ingress.ScopeCDP):
		c.Hint = "This page's token (" + g.TokenName + ") carries the cdp scope: what drives the tabs never acts as the person. Use a token without cdp, or the person key."
	case g.TokenName != "":
		c.Hint = "This page's token (" + g.TokenName + ") may watch only: the person's actions need viewer-interactive, or the person key."
	default:
		c.Hint = "Stopping the automation, approving, answering dialogs and taking over are the person's. To act as the person, " + link + "."
	}
	return c
}
