package cronfederatedhpa

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// timing is when one rule runs: its parsed schedule in its zone.
type timing struct {
	schedule cron.Schedule
	location *time.Location
}

// parseRule reads a rule's schedule and timeZone with the parser admission
// validates them with (autoscalingv1alpha1.ParseCronSchedule), so an
// admitted rule always runs. A rule without a timeZone runs in local, the
// controller's zone, as in Karmada. Errors name the field.
func parseRule(rule *autoscalingv1alpha1.CronFederatedHPARule, local *time.Location) (timing, error) {
	s, err := autoscalingv1alpha1.ParseCronSchedule(rule.Schedule)
	if err != nil {
		return timing{}, fmt.Errorf("rule %q: schedule %q: %w", rule.Name, rule.Schedule, err)
	}
	loc := local
	if rule.TimeZone != nil {
		if loc, err = time.LoadLocation(*rule.TimeZone); err != nil {
			return timing{}, fmt.Errorf("rule %q: unknown timeZone %q: must be an IANA time zone name such as \"Europe/Berlin\"", rule.Name, *rule.TimeZone)
		}
	}
	return timing{schedule: s, location: loc}, nil
}

// next is the first run strictly after t. A wall-clock time that a
// daylight-saving change skips has no run (robfig/cron steps over it). A
// wall-clock time that a change repeats runs once, at its first occurrence,
// for schedules that run less often than hourly, as classic cron does
// (robfig/cron alone would run "30 1 * * *" twice that night); hourly and
// more frequent schedules keep running by the real clock through the
// repeated hour. @every schedules are plain intervals.
func (tm timing) next(t time.Time) time.Time {
	t = t.In(tm.location)
	n := tm.schedule.Next(t)
	if _, spec := tm.schedule.(*cron.SpecSchedule); spec && !n.IsZero() && !wall(n).After(wall(t)) {
		if after := tm.schedule.Next(n); after.Sub(n) > time.Hour {
			n = after
		}
	}
	return n
}

// wall is t's wall-clock reading in its own location, as a comparable time.
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// latestMissed is the most recent run time in [from, now], or zero when the
// schedule has none there. It walks forward from from, so callers bound the
// interval (the missed-run window).
func (tm timing) latestMissed(from, now time.Time) time.Time {
	var last time.Time
	// A run exactly at from counts: start the walk just before it.
	for t := tm.next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(now); t = tm.next(t) {
		last = t
	}
	return last
}

// fingerprint identifies what of a rule decides its runs and their effect.
// A rule whose fingerprint changes is rescheduled from now; the history
// limits and the name are not part of it (the name is the rule's key).
func fingerprint(rule *autoscalingv1alpha1.CronFederatedHPARule) string {
	ptr := func(p *int32) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	zone := "-"
	if rule.TimeZone != nil {
		zone = *rule.TimeZone
	}
	return fmt.Sprintf("%s|%s|%t|%s|%s|%s", rule.Schedule, zone, suspended(rule),
		ptr(rule.TargetReplicas), ptr(rule.TargetMinReplicas), ptr(rule.TargetMaxReplicas))
}

func suspended(rule *autoscalingv1alpha1.CronFederatedHPARule) bool {
	return rule.Suspend != nil && *rule.Suspend
}

// ruleState is the controller's memory of one rule between reconciles.
type ruleState struct {
	fingerprint string
	timing      timing
	// next is the rule's next run; zero when it is suspended or cannot be
	// scheduled.
	next time.Time
	// invalid says why the rule cannot be scheduled ("" when it can).
	invalid string
}

// planRule decides a rule's next run when the controller (re)learns it: on
// first sight after a start, or after the rule changed.
//
// recorded is the nextExecutionTime the status holds for the rule (nil when
// none). On first sight (firstSight) a recorded run at or before now means
// the controller was down when it came: the most recent run time since then
// that is no older than window runs at once (next = that time, in the past).
// window 0 turns this off, as Karmada behaves. Otherwise the next run is the
// first after now.
func planRule(rule *autoscalingv1alpha1.CronFederatedHPARule, local *time.Location, now time.Time, recorded *time.Time, firstSight bool, window time.Duration) *ruleState {
	rs := &ruleState{fingerprint: fingerprint(rule)}
	tm, err := parseRule(rule, local)
	if err != nil {
		rs.invalid = err.Error()
		return rs
	}
	rs.timing = tm
	if suspended(rule) {
		return rs
	}
	rs.next = tm.next(now)
	if firstSight && window > 0 && recorded != nil && !recorded.After(now) {
		from := *recorded
		if edge := now.Add(-window); from.Before(edge) {
			from = edge
		}
		if missed := tm.latestMissed(from, now); !missed.IsZero() {
			rs.next = missed
		}
	}
	return rs
}
