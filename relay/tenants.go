package relay

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
	if s.cfg.Tenant == nil {
		return ""
	}
	return s.cfg.Tenant(r)
}

// Visible reports whether a request acting for tenant may reach in.
func Visible(tenant string, in *Instance) bool {
	return in != nil && (tenant == "" || in.Tenant() == tenant)
}

// InstancesOf returns the instances a request acting for tenant reaches,
// the one its root discovery answers for first: for the operator every
// instance, the default first; for a tenant its own, oldest first.
func (s *Server) InstancesOf(tenant string) []*Instance {
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
	slices.SortFunc(out, func(a, b *Instance) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// DefaultFor is the instance the root discovery endpoints answer for, for
// a request acting for tenant: the default instance for the operator, a
// tenant's oldest instance for a tenant, or nil when it has none.
func (s *Server) DefaultFor(tenant string) *Instance {
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
func (s *Server) LookupID(tenant, id string) *Instance {
	for _, in := range s.Instances() {
		if in.id == id {
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
func (s *Server) pairable(tenant string, in *Instance, pair bool) bool {
	s.mu.Lock()
	owner := in.Tenant()
	var ok, claimed, first bool
	switch {
	case tenant == "", owner == tenant:
		// The operator's extension token pairs any instance; one it pairs
		// first stays the operator's.
		ok = true
		first = pair && !in.paired.Swap(true)
	case owner != "" || in.isDefault || in.paired.Load():
	case !pair:
		ok = true
	default:
		in.owner.store(tenant)
		in.paired.Store(true)
		ok, claimed, first = true, true, true
	}
	s.mu.Unlock()
	if claimed {
		in.log.Info("instance paired by a tenant", "tenant", tenant)
	}
	if first && !in.isDefault {
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
func (s *Server) NewInstanceFor(tenant, profile string) (*Instance, error) {
	rules := s.tenantRules()
	if profile == "" && tenant != "" {
		profile = rules.Profiles[tenant]
	}
	if profile != "" && s.cfg.ValidProfile != nil && !s.cfg.ValidProfile(profile) {
		return nil, fmt.Errorf("no policy profile %q", profile)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("relay is shut down")
	}
	if len(s.byGUID) >= s.cfg.MaxInstances {
		s.mu.Unlock()
		s.cfg.Metrics.limited[limitInstances].Inc()
		return nil, fmt.Errorf("the relay already keeps %d instances (MaxInstances)", s.cfg.MaxInstances)
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
			s.cfg.Metrics.limited[limitInstances].Inc()
			return nil, fmt.Errorf("%w: tenant %s already keeps %d instances (tenants.max_instances); remove one first", errTenantFull, tenant, n)
		}
	}
	in := newInstance(s.Relay, cdp.NewGUID(), false, profile)
	in.owner.store(tenant)
	s.byGUID[in.guid] = in
	s.mu.Unlock()
	s.expireUnpaired(in)
	s.save()
	return in, nil
}

// expireUnpaired removes in if no extension has paired it within the
// UnclaimedTTL.
func (s *Server) expireUnpaired(in *Instance) {
	time.AfterFunc(s.cfg.UnclaimedTTL, func() {
		st := in.lock()
		claimed := st.everClaimed
		in.unlock()
		if !claimed {
			s.removeInstance(in, "no extension connected in time")
		}
	})
}

// Remove ends a minted instance and forgets it: its sockets close with
// reason, its guid is a 404 from now on. The default instance cannot be
// removed.
func (s *Server) Remove(in *Instance, reason string) error {
	if in.isDefault {
		return errors.New("the default instance cannot be removed")
	}
	s.removeInstance(in, reason)
	return nil
}

// restore adds the saved instances; called by New before anything is
// served. Entries that do not make sense are skipped with a log line,
// not fatal: one bad line must not cost everybody else their pairing.
func (s *Server) restore(saved []SavedInstance) {
	ids := map[string]bool{s.def.id: true}
	for i, sv := range saved {
		switch {
		case !cdp.ValidGUID(sv.GUID) || s.byGUID[sv.GUID] != nil:
			s.cfg.Logger.Warn("saved instance skipped: its guid is malformed or used twice", "index", i)
			continue
		case !validID(sv.ID) || ids[sv.ID]:
			s.cfg.Logger.Warn("saved instance skipped: its id is malformed or used twice", "index", i)
			continue
		case len(s.byGUID) >= s.cfg.MaxInstances:
			s.cfg.Logger.Warn("saved instance skipped: MaxInstances reached", "instance", sv.ID)
			continue
		case sv.Profile != "" && s.cfg.ValidProfile != nil && !s.cfg.ValidProfile(sv.Profile):
			// Its profile is no longer in the config: the global policy
			// would judge it more loosely than the operator meant.
			s.cfg.Logger.Warn("saved instance skipped: its policy profile is not configured", "instance", sv.ID, "profile", sv.Profile)
			continue
		}
		ids[sv.ID] = true
		in := newInstance(s.Relay, sv.GUID, false, sv.Profile)
		in.id = sv.ID
		in.log = s.cfg.Logger.With("instance", sv.ID)
		if !sv.Created.IsZero() {
			in.created = sv.Created
		}
		in.owner.store(sv.Tenant)
		in.paired.Store(sv.Paired)
		in.st.everClaimed = sv.Paired
		s.byGUID[in.guid] = in
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
func (s *Server) Saved() []SavedInstance {
	ins := s.Instances()
	out := make([]SavedInstance, 0, len(ins))
	for _, in := range ins {
		if in.isDefault {
			continue
		}
		out = append(out, SavedInstance{ID: in.id, GUID: in.guid, Tenant: in.Tenant(), Profile: in.profile, Created: in.created, Paired: in.paired.Load()})
	}
	slices.SortFunc(out, func(a, b SavedInstance) int {
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
	if s.cfg.Save == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if err := s.cfg.Save(s.Saved()); err != nil {
		s.cfg.Logger.Error("saving the instances failed; a restart would lose what changed", "err", err)
	}
}
