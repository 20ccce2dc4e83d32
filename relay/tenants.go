package relay

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Tenants. Every instance belongs to a tenant, or to the operator ("");
// a request acts for one (Config.Tenant). The operator reaches every
// instance; a tenant reaches its own only, and to it another tenant's
// instance is exactly an unknown one: the same 404 from the same code
// path, decided before anything else is looked at.
//
// Whose an instance is: the tenant of the token that minted it (POST
// /v1/instances), or the one the operator minted it for (?tenant=); for
// an instance the operator minted for nobody, the tenant of the extension
// token that first pairs it. The default instance is the operator's.

// TenantRules are what the operator says of tenants; SetTenants replaces
// them.
type TenantRules struct {
	// Known are the tenants the tokens name. The operator mints for one
	// of them only (?tenant=), so that a misspelt name is refused rather
	// than owning an instance nobody reaches. Default: none.
	Known []string
	// MaxInstances bounds the instances one tenant keeps, so that one
	// tenant cannot use up the relay's MaxInstances for the others.
	// 0: no bound but the relay's.
	MaxInstances int
	// Profiles are the policy profile of each tenant's instances; a
	// tenant's token cannot choose another. A tenant not listed gets the
	// global policy.
	Profiles map[string]string
}

// SetTenants replaces the tenant rules for instances minted from now on.
// An instance keeps its tenant and profile.
func (s *Server) SetTenants(r TenantRules) {
	r.Known = slices.Clone(r.Known)
	s.tenants.Store(&r)
}

func (s *Server) tenantRules() *TenantRules { return s.tenants.Load() }

// requestTenant is the tenant r acts for; "" is the operator.
func (s *Server) requestTenant(r *http.Request) string {
	if s.Cfg.Tenant == nil {
		return ""
	}
	return s.Cfg.Tenant(r)
}

// Visible reports whether a request acting for tenant may reach in.
func Visible(tenant string, in *core.Instance) bool {
	return in != nil && (tenant == "" || in.Tenant() == tenant)
}

// InstancesOf returns the instances a request acting for tenant reaches,
// the one its root discovery answers for first: for the operator every
// instance, the default first; for a tenant its own, oldest first.
func (s *Server) InstancesOf(tenant string) []*core.Instance {
	all := s.Instances()
	if tenant == "" {
		return all
	}
	out := all[:0:0]
	for _, in := range all {
		if in.Tenant() == tenant {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b *core.Instance) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Id, b.Id)
	})
	return out
}

// DefaultFor is the instance the root discovery endpoints answer for, for
// a request acting for tenant: the default instance for the operator, a
// tenant's oldest instance for a tenant, or nil when it has none.
func (s *Server) DefaultFor(tenant string) *core.Instance {
	if tenant == "" {
		return s.def
	}
	if ins := s.InstancesOf(tenant); len(ins) > 0 {
		return ins[0]
	}
	return nil
}

// LookupID finds an instance by its public id among those tenant
// reaches; nil for one that does not exist and for another tenant's
// alike.
func (s *Server) LookupID(tenant, id string) *core.Instance {
	for _, in := range s.Instances() {
		if in.Id == id {
			if Visible(tenant, in) {
				return in
			}
			return nil
		}
	}
	return nil
}

// pairable reports whether an extension whose token is tenant's may pair
// in and, with pair, makes in that tenant's when it may claim it. Under
// s.mu, so that of two tenants' extensions pairing at once one claims it.
func (s *Server) pairable(tenant string, in *core.Instance, pair bool) bool {
	s.mu.Lock()
	owner := in.Tenant()
	var ok, claimed, first bool
	switch {
	case tenant == "", owner == tenant:
		// The operator's extension token pairs any instance; one it pairs
		// first stays the operator's.
		ok = true
		first = pair && !in.Paired.Swap(true)
	case owner != "" || in.IsDefault || in.Paired.Load():
	case !pair:
		ok = true
	default:
		in.Owner.Store(tenant)
		in.Paired.Store(true)
		ok, claimed, first = true, true, true
	}
	s.mu.Unlock()
	if claimed {
		in.Log.Info("instance paired by a tenant", "tenant", tenant)
	}
	if first && !in.IsDefault {
		s.save()
	}
	return ok
}

// errTenantFull is a tenant at its TenantRules.MaxInstances.
var errTenantFull = errors.New("tenant's instances")

// NewInstanceFor mints an instance for tenant ("": the operator's) whose
// commands are judged by profile ("": the tenant's profile, else the
// global policy). It is removed if no extension connects to it within
// the configured UnclaimedTTL.
func (s *Server) NewInstanceFor(tenant, profile string) (*core.Instance, error) {
	rules := s.tenantRules()
	if profile == "" && tenant != "" {
		profile = rules.Profiles[tenant]
	}
	if profile != "" && s.Cfg.ValidProfile != nil && !s.Cfg.ValidProfile(profile) {
		return nil, fmt.Errorf("no policy profile %q", profile)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("relay is shut down")
	}
	if len(s.byGUID) >= s.Cfg.MaxInstances {
		s.mu.Unlock()
		s.Cfg.Metrics.Limited[metrics.LimitInstances].Inc()
		return nil, fmt.Errorf("the relay already keeps %d instances (MaxInstances)", s.Cfg.MaxInstances)
	}
	if max := rules.MaxInstances; tenant != "" && max > 0 {
		n := 0
		for _, in := range s.byGUID {
			if in.Tenant() == tenant {
				n++
			}
		}
		if n >= max {
			s.mu.Unlock()
			s.Cfg.Metrics.Limited[metrics.LimitInstances].Inc()
			return nil, fmt.Errorf("%w: tenant %s already keeps %d instances (tenants.max_instances); remove one first", errTenantFull, tenant, n)
		}
	}
	in := core.NewInstance(s.Relay, cdp.NewGUID(), false, profile)
	in.Owner.Store(tenant)
	s.byGUID[in.Guid] = in
	s.mu.Unlock()
	s.expireUnpaired(in)
	s.save()
	return in, nil
}

// expireUnpaired removes in if no extension has paired it within the
// UnclaimedTTL.
func (s *Server) expireUnpaired(in *core.Instance) {
	time.AfterFunc(s.Cfg.UnclaimedTTL, func() {
		st := in.Lock()
		claimed := st.EverClaimed
		in.Unlock()
		if !claimed {
			s.removeInstance(in, "no extension connected in time")
		}
	})
}

// Remove ends a minted instance and forgets it: its sockets close with
// reason, its guid is a 404 from now on. The default instance cannot be
// removed.
func (s *Server) Remove(in *core.Instance, reason string) error {
	if in.IsDefault {
		return errors.New("the default instance cannot be removed")
	}
	s.removeInstance(in, reason)
	return nil
}

// restore adds the saved instances; called by New before anything is
// served. Entries that do not make sense are skipped with a log line,
// not fatal: one bad line must not cost everybody else their pairing.
func (s *Server) restore(saved []config.SavedInstance) {
	ids := map[string]bool{s.def.Id: true}
	for i, sv := range saved {
		switch {
		case !cdp.ValidGUID(sv.GUID) || s.byGUID[sv.GUID] != nil:
			s.Cfg.Logger.Warn("saved instance skipped: its guid is malformed or used twice", "index", i)
			continue
		case !validID(sv.ID) || ids[sv.ID]:
			s.Cfg.Logger.Warn("saved instance skipped: its id is malformed or used twice", "index", i)
			continue
		case len(s.byGUID) >= s.Cfg.MaxInstances:
			s.Cfg.Logger.Warn("saved instance skipped: MaxInstances reached", "instance", sv.ID)
			continue
		case sv.Profile != "" && s.Cfg.ValidProfile != nil && !s.Cfg.ValidProfile(sv.Profile):
			// Its profile is no longer in the config: the global policy
			// would judge it more loosely than the operator meant.
			s.Cfg.Logger.Warn("saved instance skipped: its policy profile is not configured", "instance", sv.ID, "profile", sv.Profile)
			continue
		}
		ids[sv.ID] = true
		in := core.NewInstance(s.Relay, sv.GUID, false, sv.Profile)
		in.Id = sv.ID
		in.Log = s.Cfg.Logger.With("instance", sv.ID)
		if !sv.Created.IsZero() {
			in.CreatedAt = sv.Created
		}
		in.Owner.Store(sv.Tenant)
		in.Paired.Store(sv.Paired)
		in.St.EverClaimed = sv.Paired
		s.byGUID[in.Guid] = in
		if !sv.Paired {
			s.expireUnpaired(in)
		}
	}
}

// validID: an instance id is 12 lowercase hex digits.
func validID(s string) bool {
	return len(s) == 12 && strings.IndexFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f')
	}) < 0
}

// Saved is what Config.Save is given: every minted instance, oldest
// first.
func (s *Server) Saved() []config.SavedInstance {
	ins := s.Instances()
	out := make([]config.SavedInstance, 0, len(ins))
	for _, in := range ins {
		if in.IsDefault {
			continue
		}
		out = append(out, config.SavedInstance{ID: in.Id, GUID: in.Guid, Tenant: in.Tenant(), Profile: in.ProfileName, Created: in.CreatedAt, Paired: in.Paired.Load()})
	}
	slices.SortFunc(out, func(a, b config.SavedInstance) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// save hands the minted instances to Config.Save. Calls are serialised,
// each with the set as it is when it runs, so the last write is the
// newest.
func (s *Server) save() {
	if s.Cfg.Save == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if err := s.Cfg.Save(s.Saved()); err != nil {
		s.Cfg.Logger.Error("saving the instances failed; a restart would lose what changed", "err", err)
	}
}
