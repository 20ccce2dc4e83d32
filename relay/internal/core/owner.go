package core

import (
	"sync/atomic"
	"time"
)

// Who an instance belongs to, and what of it outlives a restart.

// ownerBox is an instance's tenant: set at most once after construction,
// when a tenant's extension pairs an instance the operator minted for
// nobody.
type ownerBox struct {
	v atomic.Pointer[string]
}

func (b *ownerBox) load() string {
	if p := b.v.Load(); p != nil {
		return *p
	}
	return ""
}

func (b *ownerBox) Store(t string) { b.v.Store(&t) }

// Tenant is the tenant the instance belongs to; "" is the operator's.
func (in *Instance) Tenant() string { return in.Owner.load() }

// Created is when the instance was minted (before a restart, for one the
// state dir restored).
func (in *Instance) Created() time.Time { return in.CreatedAt }
