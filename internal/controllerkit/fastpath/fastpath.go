// Package fastpath names the shortcuts Flotilla's controller manager takes
// on the propagation path, and turns each on or off. Each one saves a write,
// a watch delivery or a status write per template, measured in
// bench/README.md, and each crosses the boundary between two controllers;
// docs/architecture.md describes what each assumes and how it fails safe.
// With every shortcut off the controllers are plainly level-based: every
// controller reads its inputs from the informer caches and writes only what
// it owns, and the integration tests check that they converge to the same
// state both ways.
package fastpath

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Options selects the shortcuts. The zero value turns them all off; All
// turns them all on, the default of `flotilla controller-manager`.
type Options struct {
	// Preschedule: the detector runs the scheduler on a new binding before
	// creating it, so it is born with spec.clusters, and on a changed one
	// (new replicas, a new placement) before updating it (one write and one
	// watch delivery fewer each time). Needs the scheduler in the same
	// process.
	Preschedule bool
	// BornScheduled: the status controller's first write of a binding born
	// scheduled carries its Scheduled condition, and the scheduler leaves
	// it alone for BornScheduledGrace (one status write fewer).
	BornScheduled bool
	// Handoff: the binding controller hands each Work it creates to the
	// in-process execution controller, which applies it at once instead of
	// waiting for the Work's watch event. Needs both controllers in the same
	// process.
	Handoff bool
	// ReadYourWrites: an object a controller has just written stands in
	// for its informer copy until the informer delivers it: the template
	// as the detector's claim patch returned it, a member object as its
	// create returned it.
	ReadYourWrites bool
	// StatusGate: status reports (Work, binding and template status) wait
	// while propagation writes are in flight, at most 30 s (the
	// statusgate.Gate); success events wait with them.
	StatusGate bool
}

// All turns every shortcut on.
func All() Options {
	return Options{Preschedule: true, BornScheduled: true, Handoff: true, ReadYourWrites: true, StatusGate: true}
}

// AddFlags registers one controller-manager flag per shortcut, each
// defaulting to the value already in o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Preschedule, "fast-path-preschedule", o.Preschedule,
		"schedule a ResourceBinding in the detector's own write when it is created or its replicas or placement change (needs the scheduler in this process)")
	fs.BoolVar(&o.BornScheduled, "fast-path-born-scheduled", o.BornScheduled,
		"let the first status write of a binding born scheduled carry its Scheduled condition")
	fs.BoolVar(&o.Handoff, "fast-path-handoff", o.Handoff,
		"apply a new Work to its member at once, without waiting for its watch event (needs the execution controller in this process)")
	fs.BoolVar(&o.ReadYourWrites, "fast-path-read-your-writes", o.ReadYourWrites,
		"use an object just written (a claimed template, a created member object) until the informer delivers it")
	fs.BoolVar(&o.StatusGate, "fast-path-status-gate", o.StatusGate,
		"hold status reports and success events back while propagation writes are in flight (at most 30s)")
}

// String lists the shortcuts that are on, for logs: "preschedule,handoff".
func (o Options) String() string {
	var on string
	for _, f := range []struct {
		name string
		set  bool
	}{{"preschedule", o.Preschedule}, {"born-scheduled", o.BornScheduled}, {"handoff", o.Handoff},
		{"read-your-writes", o.ReadYourWrites}, {"status-gate", o.StatusGate}} {
		if f.set {
			on += "," + f.name
		}
	}
	if on == "" {
		return "none"
	}
	return fmt.Sprint(on[1:])
}
