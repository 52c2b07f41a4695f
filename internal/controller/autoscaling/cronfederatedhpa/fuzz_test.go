package cronfederatedhpa

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// FuzzRuleSchedule parses a fuzzed rule's schedule and timeZone and plans its runs from a
// fuzzed time (between 1834 and 2514) in a zone with daylight-saving changes. Invariants: no
// panic; the rule parses exactly when admission (ValidateCronFederatedHPA) admits it, and its
// schedule exactly when robfig/cron's standard parser takes it once trimmed, save the TZ= and
// CRON_TZ= prefixes that the timeZone field replaces; the next run is zero (never) exactly
// when robfig/cron finds none, and otherwise strictly after the given time and robfig/cron's
// next run or the one after it (a repeated wall-clock time runs once); a planned rule is
// invalid exactly when it does not parse, has no next run when suspended, and otherwise runs
// next at its next run or, when a recorded run was missed, at a time inside the window.
func FuzzRuleSchedule(f *testing.F) {
	for _, seed := range []struct {
		schedule, zone string
		hasZone        bool
		at             int64
		window         uint8
		recorded       int32
	}{
		{"0 9 * * *", "Asia/Shanghai", true, 1796000000, 5, -120},
		{"*/1 * * * *", "", false, 1796000000, 5, -200},
		{"30 2 * * *", "America/New_York", true, 1772953200, 0, 0},
		{"30 1 * * *", "America/New_York", true, 1793511000, 90, -3600},
		{"0 * * * *", "Europe/London", true, 1793494800, 180, -7200},
		{"@hourly", "UTC", true, 1796000000, 61, -3600},
		{"@every 1s", "", true, 1796000000, 255, -86400},
		{"@every 90m", "Local", true, 1796000000, 200, -5400},
		{"@every -5s", "", false, 0, 1, -1},
		{"0 0 30 2 *", "UTC", true, 1796000000, 10, -60},
		{"59 23 31 12 SAT", "Pacific/Kiritimati", true, 1796000000, 0, 0},
		{"0 0 1-31/2 JAN-DEC/3 MON-FRI", "Australia/Lord_Howe", true, 1796000000, 30, -600},
		{" 15 3 * * * ", "Asia/Kathmandu", true, 1796000000, 0, 0},
		{"  @daily", "", false, 1796000000, 0, 0},
		{"TZ=UTC 0 9 * * *", "", false, 1796000000, 0, 0},
		{"CRON_TZ=Asia/Tokyo", "", false, 1796000000, 0, 0},
		{"61 * * * *", "UTC", true, 1796000000, 0, 0},
		{"* * * * * *", "UTC", true, 1796000000, 0, 0},
		{"* * * *", "Mars/Olympus", true, 1796000000, 0, 0},
		{"?", "../../etc/passwd", true, 1796000000, 0, 0},
		{"", "", false, 0, 0, 0},
	} {
		f.Add(seed.schedule, seed.zone, seed.hasZone, seed.at, seed.window, seed.recorded)
	}
	local, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schedule, zone string, hasZone bool, at int64, window uint8, recorded int32) {
		rule := &autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: schedule}
		if hasZone {
			rule.TimeZone = &zone
		}
		tm, err := parseRule(rule, local)
		obj := &autoscalingv1alpha1.CronFederatedHPA{Spec: autoscalingv1alpha1.CronFederatedHPASpec{Rules: []autoscalingv1alpha1.CronFederatedHPARule{*rule}}}
		if errs := autoscalingv1alpha1.ValidateCronFederatedHPA(obj); (len(errs) == 0) != (err == nil) {
			t.Fatalf("schedule %q, timeZone %q: admission says %v, parseRule %v", schedule, zone, errs, err)
		}
		trimmed := strings.TrimSpace(schedule)
		prefixed := strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=")
		_, ours := autoscalingv1alpha1.ParseCronSchedule(schedule)
		if !prefixed {
			// robfig/cron panics on a TZ= prefix without a space after it: only ask it the rest.
			_, theirs := cron.ParseStandard(trimmed)
			if (ours == nil) != (theirs == nil) {
				t.Fatalf("schedule %q: ours %v, robfig/cron's standard parser %v", schedule, ours, theirs)
			}
		} else if ours == nil {
			t.Fatalf("schedule %q with a zone prefix was accepted", schedule)
		}
		now := time.Unix(int64(uint64(at)%(1<<34))-(1<<32), int64(uint64(at)%1e9))
		suspend := at < 0
		rule.Suspend = &suspend
		var rec *time.Time
		if recorded != 0 {
			r := now.Add(time.Duration(recorded) * time.Second)
			rec = &r
		}
		plan := planRule(rule, local, now, rec, true, time.Duration(window)*time.Minute)
		if (plan.invalid == "") != (err == nil) {
			t.Fatalf("schedule %q, timeZone %q: planRule says %q, parseRule %v", schedule, zone, plan.invalid, err)
		}
		if err != nil {
			return
		}
		next := tm.next(now)
		first := tm.schedule.Next(now.In(tm.location))
		switch {
		case next.IsZero() != first.IsZero():
			t.Fatalf("schedule %q in %s after %s: next %s, robfig/cron's %s", schedule, tm.location, now, next, first)
		case !next.IsZero() && !next.After(now):
			t.Fatalf("schedule %q in %s: next run %s is not after %s", schedule, tm.location, next, now)
		case !next.IsZero() && !next.Equal(first) && !next.Equal(tm.schedule.Next(first)):
			t.Fatalf("schedule %q in %s after %s: next %s is neither robfig/cron's %s nor the one after", schedule, tm.location, now, next, first)
		}
		missed := rec != nil && window > 0 && !rec.After(now) && !plan.next.Equal(next)
		switch {
		case suspend && !plan.next.IsZero():
			t.Fatalf("suspended schedule %q runs at %s", schedule, plan.next)
		case !suspend && !missed && !plan.next.Equal(next):
			t.Fatalf("schedule %q planned at %s, want its next run %s", schedule, plan.next, next)
		case !suspend && missed && (plan.next.Before(*rec) || plan.next.Before(now.Add(-time.Duration(window)*time.Minute)) || plan.next.After(now)):
			t.Fatalf("schedule %q planned at %s for a run missed since %s, outside the %dm window before %s", schedule, plan.next, rec, window, now)
		}
	})
}
