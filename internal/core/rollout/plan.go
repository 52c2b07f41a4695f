// Package rollout is the pure core of staged rollouts
// (docs/design/staged-rollouts.md): given a strategy, the waves of clusters
// and what each cluster reports, Plan decides which clusters may take a new
// rendering now, and whether the rollout progresses, waits, is paused, has
// failed or has succeeded. It keeps no state: everything it needs is in its
// Input, read from the API on every reconcile, so a restart resumes where
// the rollout was. Nothing here talks to an API server.
package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Type is how a rollout moves through its waves, after OCM's
// RolloutStrategy types.
type Type string

const (
	// All admits every cluster at once; deadline and failures are only
	// reported.
	All Type = "All"
	// Progressive admits clusters in wave order, at most MaxConcurrency in
	// flight, failures counted over all clusters.
	Progressive Type = "Progressive"
	// ProgressivePerGroup admits one wave at a time (at most
	// MaxConcurrency of it in flight) and moves on once every cluster of
	// the wave is done or failed within the wave's MaxFailures.
	ProgressivePerGroup Type = "ProgressivePerGroup"
)

// Amount is a count or a percentage ("2" or "25%" in the API).
type Amount struct {
	// Value is the count, or the percentage when Percent is set.
	Value int
	// Percent says Value is a percentage of a total.
	Percent bool
}

// Of resolves a to a count of total clusters: a percentage rounds up.
func (a Amount) Of(total int) int {
	if !a.Percent {
		return a.Value
	}
	return (a.Value*total + 99) / 100
}

// Strategy is what Plan needs of a RolloutStrategy.
type Strategy struct {
	Type Type
	// MaxConcurrency bounds the clusters in flight (admitted, not yet done
	// or failed): of all clusters for Progressive, of the wave for
	// ProgressivePerGroup; nil means 1 for Progressive and the whole wave
	// for ProgressivePerGroup. A resolved 0 counts as 1.
	MaxConcurrency *Amount
	// MinSuccessTime is how long an admitted cluster must stay Healthy on
	// the new rendering to be done.
	MinSuccessTime time.Duration
	// ProgressDeadline is how long an admitted cluster may take to become
	// Healthy before it counts as failed; 0 means no deadline.
	ProgressDeadline time.Duration
	// MaxFailures is how many failed clusters are tolerated: over all
	// clusters for Progressive, per wave for ProgressivePerGroup. Zero
	// tolerates none.
	MaxFailures Amount
}

// Wave is a group of clusters that move together, in rollout order.
type Wave struct {
	// Name is the group's name (a label value, a step name).
	Name string
	// Clusters are the wave's cluster names.
	Clusters []string
	// Mandatory waves go first and tolerate no failure
	// (mandatoryDecisionGroups).
	Mandatory bool
}

// Cluster is what one target cluster reports.
type Cluster struct {
	// Done says the cluster is through for this change: it was Healthy
	// for MinSuccessTime, or already ran the change when the rollout
	// started. It stays done.
	Done bool
	// Admitted says the cluster has been given the new rendering.
	Admitted bool
	// AdmittedAt is when it was.
	AdmittedAt time.Time
	// Healthy says the cluster runs the new rendering (applied, its
	// generation observed) and reports it Healthy.
	Healthy bool
	// HealthySince is when it last became Healthy on the new rendering.
	HealthySince time.Time
}

// Input is everything Plan reads.
type Input struct {
	Strategy Strategy
	// Waves in order; a cluster in none is not the rollout's (it takes the
	// new rendering at once).
	Waves []Wave
	// Clusters by name.
	Clusters map[string]Cluster
	// Paused is the user's pause.
	Paused bool
	// Now is the time of the decision.
	Now time.Time
}

// Phase is where a rollout stands: the reasons of the binding's
// Progressing condition.
type Phase string

const (
	// Progressing means clusters are admitted or soaking.
	Progressing Phase = "RolloutProgressing"
	// Paused means the user paused it.
	Paused Phase = "RolloutPaused"
	// Succeeded means every cluster is done.
	Succeeded Phase = "RolloutSucceeded"
	// Failed means more clusters failed than tolerated; nothing more is admitted.
	Failed Phase = "RolloutFailed"
)

// Decision is what Plan decides.
type Decision struct {
	// Admit are the clusters to give the new rendering now, in order.
	Admit []string
	// Phase and Message describe the rollout.
	Phase   Phase
	Message string
	// Wave is the index of the wave the rollout is in (len(Waves) when
	// every wave is through).
	Wave int
	// Failed are the clusters that failed, sorted.
	Failed []string
	// RequeueAfter is when to look again without an event (a soak ending,
	// a deadline passing); 0 means no timer is needed.
	RequeueAfter time.Duration
}

type state int

const (
	waiting state = iota // not admitted
	inFlight
	done
	failed
)

// Plan decides the next step of a rollout.
func Plan(in Input) Decision {
	d := Decision{}
	st := map[string]state{}
	for _, w := range in.Waves {
		for _, name := range w.Clusters {
			st[name] = in.state(name, &d)
		}
	}
	for name, s := range st {
		if s == failed {
			d.Failed = append(d.Failed, name)
		}
	}
	slices.Sort(d.Failed)
	waves := orderWaves(in.Waves)
	switch in.Strategy.Type {
	case All:
		in.planAll(waves, st, &d)
	case ProgressivePerGroup:
		in.planPerGroup(waves, st, &d)
	default:
		in.planProgressive(waves, st, &d)
	}
	if in.Paused && d.Phase == Progressing {
		d.Admit = nil
		d.Phase, d.Message = Paused, "paused by the user; "+d.Message
	}
	return d
}

// orderWaves puts the mandatory waves first, keeping the order otherwise.
func orderWaves(waves []Wave) []Wave {
	out := slices.Clone(waves)
	slices.SortStableFunc(out, func(a, b Wave) int {
		switch {
		case a.Mandatory == b.Mandatory:
			return 0
		case a.Mandatory:
			return -1
		}
		return 1
	})
	return out
}

// state classifies one cluster and keeps the earliest timer in d.
func (in Input) state(name string, d *Decision) state {
	c, ok := in.Clusters[name]
	switch {
	case ok && c.Done:
		return done
	case !ok || !c.Admitted:
		return waiting
	}
	if c.Healthy {
		left := c.HealthySince.Add(in.Strategy.MinSuccessTime).Sub(in.Now)
		if left <= 0 {
			return done
		}
		d.timer(left)
		return inFlight
	}
	if in.Strategy.ProgressDeadline > 0 {
		left := c.AdmittedAt.Add(in.Strategy.ProgressDeadline).Sub(in.Now)
		if left <= 0 {
			return failed
		}
		d.timer(left)
	}
	return inFlight
}

func (d *Decision) timer(after time.Duration) {
	if d.RequeueAfter == 0 || after < d.RequeueAfter {
		d.RequeueAfter = after
	}
}

func (in Input) planAll(waves []Wave, st map[string]state, d *Decision) {
	var total, nDone int
	for _, w := range waves {
		for _, name := range w.Clusters {
			total++
			switch st[name] {
			case waiting:
				d.Admit = append(d.Admit, name)
			case done:
				nDone++
			}
		}
	}
	d.Wave = len(waves)
	in.conclude(total, nDone, in.Strategy.MaxFailures.Of(total), d)
}

func (in Input) planProgressive(waves []Wave, st map[string]state, d *Decision) {
	var order []string
	var total, nDone, flying, mandatoryLeft int
	for _, w := range waves {
		for _, name := range w.Clusters {
			order = append(order, name)
			total++
			switch st[name] {
			case done:
				nDone++
			case inFlight:
				flying++
			}
			if w.Mandatory && st[name] != done {
				mandatoryLeft++
			}
		}
	}
	window := 1
	if in.Strategy.MaxConcurrency != nil {
		window = max(1, in.Strategy.MaxConcurrency.Of(total))
	}
	budget := in.Strategy.MaxFailures.Of(total)
	if len(d.Failed) > budget || in.mandatoryFailed(waves, st) {
		in.conclude(total, nDone, budget, d)
		return
	}
	d.Wave = len(waves)
	for i, w := range waves {
		if slices.ContainsFunc(w.Clusters, func(n string) bool { return st[n] == waiting || st[n] == inFlight }) {
			d.Wave = i
			break
		}
	}
	for _, name := range order {
		if flying >= window {
			break
		}
		if st[name] != waiting {
			continue
		}
		if mandatoryLeft > 0 && !in.isMandatory(waves, name) {
			break // the mandatory waves finish first
		}
		d.Admit = append(d.Admit, name)
		flying++
	}
	in.conclude(total, nDone, budget, d)
}

func (in Input) planPerGroup(waves []Wave, st map[string]state, d *Decision) {
	total, nDone := 0, 0
	for _, w := range waves {
		for _, name := range w.Clusters {
			total++
			if st[name] == done {
				nDone++
			}
		}
	}
	d.Wave = len(waves)
	for i, w := range waves {
		var waveFailed, flying int
		var queued []string
		for _, name := range w.Clusters {
			switch st[name] {
			case failed:
				waveFailed++
			case inFlight:
				flying++
			case waiting:
				queued = append(queued, name)
			}
		}
		budget := in.Strategy.MaxFailures.Of(len(w.Clusters))
		if w.Mandatory {
			budget = 0
		}
		if waveFailed > budget {
			d.Wave = i
			d.Phase = Failed
			d.Message = fmt.Sprintf("wave %s: %d of %d clusters not Healthy within the progressDeadline of %s (%s), more than the %d tolerated (maxFailures); nothing more is admitted",
				w.Name, waveFailed, len(w.Clusters), in.Strategy.ProgressDeadline, strings.Join(failedIn(w, st), ", "), budget)
			d.Admit = nil
			return
		}
		if flying == 0 && len(queued) == 0 {
			continue // this wave is through
		}
		d.Wave = i
		window := len(w.Clusters)
		if in.Strategy.MaxConcurrency != nil {
			window = max(1, in.Strategy.MaxConcurrency.Of(len(w.Clusters)))
		}
		for _, name := range queued {
			if flying >= window {
				break
			}
			d.Admit = append(d.Admit, name)
			flying++
		}
		d.Phase = Progressing
		d.Message = fmt.Sprintf("wave %s (%d of %d): %d of %d clusters done", w.Name, i+1, len(waves), countDone(w, st), len(w.Clusters))
		return
	}
	in.conclude(total, nDone, len(d.Failed), d) // failures were within each wave's budget
}

// conclude sets the phase once the plan's admissions are known.
func (in Input) conclude(total, nDone, budget int, d *Decision) {
	switch {
	case len(d.Failed) > budget:
		d.Phase = Failed
		d.Admit = nil
		d.Message = fmt.Sprintf("%d of %d clusters not Healthy within the progressDeadline of %s (%s), more than the %d tolerated (maxFailures); nothing more is admitted",
			len(d.Failed), total, in.Strategy.ProgressDeadline, strings.Join(d.Failed, ", "), budget)
	case nDone+len(d.Failed) == total && len(d.Admit) == 0:
		d.Phase = Succeeded
		d.Message = fmt.Sprintf("%d of %d clusters done", nDone, total)
		if len(d.Failed) > 0 {
			d.Message += fmt.Sprintf(", %d failed within the %d tolerated (%s)", len(d.Failed), budget, strings.Join(d.Failed, ", "))
		}
	default:
		d.Phase = Progressing
		d.Message = fmt.Sprintf("%d of %d clusters done", nDone, total)
	}
}

func (in Input) mandatoryFailed(waves []Wave, st map[string]state) bool {
	for _, w := range waves {
		if w.Mandatory && slices.ContainsFunc(w.Clusters, func(n string) bool { return st[n] == failed }) {
			return true
		}
	}
	return false
}

func (in Input) isMandatory(waves []Wave, name string) bool {
	for _, w := range waves {
		if w.Mandatory && slices.Contains(w.Clusters, name) {
			return true
		}
	}
	return false
}

func failedIn(w Wave, st map[string]state) []string {
	var out []string
	for _, n := range w.Clusters {
		if st[n] == failed {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func countDone(w Wave, st map[string]state) int {
	n := 0
	for _, c := range w.Clusters {
		if st[c] == done {
			n++
		}
	}
	return n
}

// GroupBy builds waves named names from clusters: a cluster joins the
// first wave i for which in(cluster, i) holds; the others form a last wave,
// "(other)". Cluster names are sorted within a wave; empty waves are kept,
// so that indexes match names.
func GroupBy(clusters []string, names []string, in func(cluster string, wave int) bool) []Wave {
	waves := make([]Wave, len(names))
	for i, n := range names {
		waves[i].Name = n
	}
	other := Wave{Name: "(other)"}
	for _, c := range clusters {
		i := -1
		for j := range names {
			if in(c, j) {
				i = j
				break
			}
		}
		if i < 0 {
			other.Clusters = append(other.Clusters, c)
			continue
		}
		waves[i].Clusters = append(waves[i].Clusters, c)
	}
	for i := range waves {
		slices.Sort(waves[i].Clusters)
	}
	if len(other.Clusters) > 0 {
		slices.Sort(other.Clusters)
		waves = append(waves, other)
	}
	return waves
}

// GroupByLabel builds the waves of clusters (name → labels) grouped by the
// value of label key, in the order of groups; clusters whose value is in
// no group (or that lack the label) form a last wave, "(other)". Cluster
// names are sorted within a wave; empty waves are kept, so that indexes
// match groups.
func GroupByLabel(clusters map[string]map[string]string, key string, groups []string) []Wave {
	names := make([]string, 0, len(clusters))
	for name := range clusters {
		names = append(names, name)
	}
	return GroupBy(names, groups, func(c string, i int) bool {
		v, ok := clusters[c][key]
		return ok && v == groups[i]
	})
}
