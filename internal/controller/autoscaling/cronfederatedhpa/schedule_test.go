package cronfederatedhpa

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func rule(schedule string, zone string) *autoscalingv1alpha1.CronFederatedHPARule {
	r := &autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: schedule, TargetReplicas: ptr.To[int32](3)}
	if zone != "" {
		r.TimeZone = &zone
	}
	return r
}

func TestNextRunsInTheRulesZone(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	for _, tc := range []struct {
		name, schedule, zone string
		after, want          time.Time
	}{
		{"every minute", "*/1 * * * *", "", time.Date(2026, 11, 30, 9, 0, 30, 0, time.UTC), time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC)},
		{"minute boundary is exclusive", "*/1 * * * *", "", time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC), time.Date(2026, 11, 30, 9, 2, 0, 0, time.UTC)},
		{"09:00 Shanghai is 01:00 UTC", "0 9 * * *", "Asia/Shanghai", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)},
		{"descriptor", "@hourly", "UTC", time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		// 2026-03-08 02:30 does not exist in New York (clocks jump from
		// 02:00 to 03:00): that day's run is skipped, not run twice or at
		// a made-up time.
		{"DST gap skipped", "30 2 * * *", "America/New_York", time.Date(2026, 3, 8, 0, 0, 0, 0, ny), time.Date(2026, 3, 9, 2, 30, 0, 0, ny)},
		// 2026-11-01 01:30 happens twice in New York; the rule runs at
		// the first and next on the following day.
		{"DST overlap runs once", "30 1 * * *", "America/New_York", time.Date(2026, 11, 1, 1, 30, 0, 0, ny), time.Date(2026, 11, 2, 1, 30, 0, 0, ny)},
		{"DST overlap, started late in the first 01:xx", "30 1 * * *", "America/New_York", time.Date(2026, 11, 1, 1, 45, 0, 0, ny), time.Date(2026, 11, 2, 1, 30, 0, 0, ny)},
		{"DST overlap, minutely keeps the real clock", "*/1 * * * *", "America/New_York", time.Date(2026, 11, 1, 1, 59, 30, 0, ny), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)},
		{"DST overlap, hourly runs each real hour", "0 * * * *", "America/New_York", time.Date(2026, 11, 1, 1, 0, 0, 0, ny), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)},
		{"local zone when none is set", "0 9 * * *", "", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
	} {
		tm, err := parseRule(rule(tc.schedule, tc.zone), time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := tm.next(tc.after); !got.Equal(tc.want) {
			t.Errorf("%s: next after %s = %s, want %s", tc.name, tc.after, got, tc.want)
		}
	}
}

func TestParseRuleNamesTheRuleAndField(t *testing.T) {
	if _, err := parseRule(rule("61 * * * *", ""), time.UTC); err == nil || !contains(err.Error(), `rule "r": schedule`) {
		t.Errorf("bad schedule: %v", err)
	}
	if _, err := parseRule(rule("* * * * *", "Mars/Olympus"), time.UTC); err == nil || !contains(err.Error(), "timeZone") {
		t.Errorf("bad zone: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

func TestPlanRuleMakesUpOneMissedRunInsideTheWindow(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 30, h, m, 0, 0, time.UTC) }
	daily := rule("0 9 * * *", "UTC")
	minutely := rule("*/1 * * * *", "UTC")
	for _, tc := range []struct {
		name       string
		rule       *autoscalingv1alpha1.CronFederatedHPARule
		recorded   *time.Time
		now        time.Time
		firstSight bool
		window     time.Duration
		want       time.Time
	}{
		{"09:00 missed during a restart runs at 09:02", daily, ptr.To(at(9, 0)), at(9, 2), true, 5 * time.Minute, at(9, 0)},
		{"too old for the window", daily, ptr.To(at(9, 0)), at(9, 7), true, 5 * time.Minute, at(9, 0).AddDate(0, 0, 1)},
		{"window 0 is Karmada's behaviour", daily, ptr.To(at(9, 0)), at(9, 2), true, 0, at(9, 0).AddDate(0, 0, 1)},
		{"not after a start", daily, ptr.To(at(9, 0)), at(9, 2), false, 5 * time.Minute, at(9, 0).AddDate(0, 0, 1)},
		{"nothing recorded: nothing missed", daily, nil, at(9, 2), true, 5 * time.Minute, at(9, 0).AddDate(0, 0, 1)},
		{"recorded run still ahead", daily, ptr.To(at(9, 0)), at(8, 59), true, 5 * time.Minute, at(9, 0)},
		{"several missed: only the latest runs", minutely, ptr.To(at(9, 0)), at(9, 3).Add(20 * time.Second), true, 5 * time.Minute, at(9, 3)},
	} {
		rs := planRule(tc.rule, time.UTC, tc.now, tc.recorded, tc.firstSight, tc.window)
		if !rs.next.Equal(tc.want) {
			t.Errorf("%s: next = %s, want %s", tc.name, rs.next, tc.want)
		}
	}
}

func TestPlanRuleSuspendedHasNoNextRun(t *testing.T) {
	r := rule("*/1 * * * *", "")
	r.Suspend = ptr.To(true)
	if rs := planRule(r, time.UTC, time.Now(), nil, true, time.Minute); !rs.next.IsZero() || rs.invalid != "" {
		t.Errorf("suspended rule: next %s, invalid %q", rs.next, rs.invalid)
	}
}

func TestFingerprintIgnoresNameAndLimits(t *testing.T) {
	a := rule("0 9 * * *", "UTC")
	b := *a
	b.Name, b.SuccessfulHistoryLimit = "other", ptr.To[int32](7)
	if fingerprint(a) != fingerprint(&b) {
		t.Error("history limits changed the fingerprint")
	}
	for _, edit := range []func(r *autoscalingv1alpha1.CronFederatedHPARule){
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.Schedule = "0 10 * * *" },
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TimeZone = ptr.To("Asia/Tokyo") },
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.Suspend = ptr.To(true) },
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetReplicas = ptr.To[int32](4) },
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetMinReplicas = ptr.To[int32](4) },
		func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetMaxReplicas = ptr.To[int32](4) },
	} {
		c := *a
		edit(&c)
		if fingerprint(&c) == fingerprint(a) {
			t.Errorf("edit %+v kept the fingerprint", c)
		}
	}
}
