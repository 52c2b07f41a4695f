package v1alpha1

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func TestValidateCronSchedule(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		wantErr  string // substring; "" means valid
	}{
		{name: "a daily schedule is valid", schedule: "0 9 * * *"},
		{name: "ranges, steps and lists are valid", schedule: "*/15 8-18 * 1,6 MON-FRI"},
		{name: "the @hourly descriptor is valid", schedule: "@hourly"},
		{name: "an @every interval is valid", schedule: "@every 90m"},
		{name: "surrounding spaces are ignored", schedule: "  0 9 * * *  "},
		{name: "an empty schedule is invalid", schedule: "", wantErr: "not empty"},
		{name: "four fields are invalid", schedule: "0 9 * *", wantErr: "invalid cron expression"},
		{name: "a seconds field is invalid", schedule: "0 0 9 * * *", wantErr: "invalid cron expression"},
		{name: "an hour of 24 is invalid, and the error names the hour field", schedule: "0 24 * * *", wantErr: `the hour (0-23) field "24"`},
		{name: "a minute of 60 names the minute field", schedule: "60 9 * * *", wantErr: `the minute (0-59) field "60"`},
		{name: "a bad weekday names the day of week field", schedule: "0 9 * * MON-XYZ", wantErr: `the day of week (0-6 or SUN-SAT) field "MON-XYZ"`},
		{name: "an unknown descriptor is invalid", schedule: "@fortnightly", wantErr: "invalid cron expression"},
		{name: "words are invalid", schedule: "every morning", wantErr: "invalid cron expression"},
		{name: "a CRON_TZ prefix is refused", schedule: "CRON_TZ=UTC 0 9 * * *", wantErr: "timeZone field"},
		{name: "a TZ prefix is refused", schedule: "TZ=Asia/Tokyo 0 9 * * *", wantErr: "timeZone field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateCronSchedule(tc.schedule)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestValidateTimeZone(t *testing.T) {
	tests := []struct {
		name    string
		zone    string
		wantErr string
	}{
		{name: "a region/city zone is valid", zone: "Asia/Shanghai"},
		{name: "UTC is valid", zone: "UTC"},
		{name: "an empty name means UTC, as Karmada accepts", zone: ""},
		{name: "Local is accepted, as Karmada accepts it", zone: "Local"},
		{name: "an unknown city is invalid", zone: "Europe/Atlantis", wantErr: "unknown time zone"},
		{name: "a UTC offset is invalid", zone: "+08:00", wantErr: "IANA time zone name"},
		{name: "a path escape is invalid", zone: "../etc/passwd", wantErr: "unknown time zone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, ValidateTimeZone(tc.zone), tc.wantErr)
		})
	}
}

func TestValidateCronFederatedHPA(t *testing.T) {
	obj := func(rules ...CronFederatedHPARule) *CronFederatedHPA {
		return &CronFederatedHPA{Spec: CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			Rules:          rules,
		}}
	}
	tests := []struct {
		name       string
		obj        *CronFederatedHPA
		wantFields []string // field paths of the expected errors, in order
	}{
		{
			name: "valid rules give no errors",
			obj: obj(
				CronFederatedHPARule{Name: "up", Schedule: "0 9 * * *", TimeZone: ptr.To("Europe/Berlin")},
				CronFederatedHPARule{Name: "down", Schedule: "@daily"},
			),
		},
		{
			name:       "a bad schedule is reported at its rule",
			obj:        obj(CronFederatedHPARule{Name: "up", Schedule: "0 9 * * *"}, CronFederatedHPARule{Name: "down", Schedule: "soon"}),
			wantFields: []string{"spec.rules[1].schedule"},
		},
		{
			name:       "a bad time zone is reported at its rule",
			obj:        obj(CronFederatedHPARule{Name: "up", Schedule: "0 9 * * *", TimeZone: ptr.To("Mars/Olympus")}),
			wantFields: []string{"spec.rules[0].timeZone"},
		},
		{
			name:       "every bad rule is reported",
			obj:        obj(CronFederatedHPARule{Name: "up", Schedule: "x", TimeZone: ptr.To("nowhere")}),
			wantFields: []string{"spec.rules[0].schedule", "spec.rules[0].timeZone"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateCronFederatedHPA(tc.obj)
			var got []string
			for _, err := range errs {
				got = append(got, err.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantFields, ",") {
				t.Fatalf("errors at %v, want at %v (%v)", got, tc.wantFields, errs)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("expected no error, got %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("expected an error containing %q, got %v", want, err)
	}
}
