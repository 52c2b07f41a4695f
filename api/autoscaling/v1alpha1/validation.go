package v1alpha1

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zone names must validate the same on every host, with or without zoneinfo files

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCronFederatedHPA checks the CronFederatedHPA rules that the CRD's CEL rules cannot
// express: every rule's schedule must be a cron expression in Kubernetes CronJob syntax, and
// every timeZone must name a zone of the IANA time zone database. It stands in for this part
// of Karmada's CronFederatedHPA validating webhook. The errors carry field paths such as
// spec.rules[0].schedule; an empty list means the object is valid.
func ValidateCronFederatedHPA(obj *CronFederatedHPA) field.ErrorList {
	var errs field.ErrorList
	rulesPath := field.NewPath("spec", "rules")
	for i := range obj.Spec.Rules {
		rule := &obj.Spec.Rules[i]
		rulePath := rulesPath.Index(i)
		if err := ValidateCronSchedule(rule.Schedule); err != nil {
			errs = append(errs, field.Invalid(rulePath.Child("schedule"), rule.Schedule, err.Error()))
		}
		if rule.TimeZone != nil {
			if err := ValidateTimeZone(*rule.TimeZone); err != nil {
				errs = append(errs, field.Invalid(rulePath.Child("timeZone"), *rule.TimeZone, err.Error()))
			}
		}
	}
	return errs
}

// cronParser reads the five-field cron syntax of Kubernetes CronJobs (minute, hour, day of
// month, month, day of week) and the @yearly/@monthly/@weekly/@daily/@hourly/@every
// descriptors, the syntax the CronFederatedHPA controller schedules with.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ValidateCronSchedule reports whether schedule is a valid five-field cron expression or
// descriptor. Time zone prefixes (TZ= and CRON_TZ=) are refused: the rule's timeZone field is
// the one place to set a zone.
func ValidateCronSchedule(schedule string) error {
	_, err := ParseCronSchedule(schedule)
	return err
}

// ParseCronSchedule parses a rule's schedule with the parser that validates it, so a schedule
// that is admitted is one that runs. The returned schedule's Next works in the location of the
// time it is given (the rule's timeZone). Errors are those of ValidateCronSchedule.
func ParseCronSchedule(schedule string) (cron.Schedule, error) {
	trimmed := strings.TrimSpace(schedule)
	if trimmed == "" {
		return nil, fmt.Errorf("must be a cron expression such as \"0 9 * * *\", not empty")
	}
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return nil, fmt.Errorf("must not carry a TZ= or CRON_TZ= prefix; set the rule's timeZone field instead")
	}
	s, err := cronParser.Parse(trimmed)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression: %w", cronFieldError(trimmed, err))
	}
	return s, nil
}

// cronFields names the five fields of a cron expression, with their ranges.
var cronFields = [...]string{"minute (0-59)", "hour (0-23)", "day of month (1-31)", "month (1-12 or JAN-DEC)", "day of week (0-6 or SUN-SAT)"}

// cronFieldError names the field of a five-field expression that err is
// about, by parsing each field alone with "*" in the others; err unchanged
// when no single field is to blame (or the expression has not 5 fields).
func cronFieldError(expr string, err error) error {
	fields := strings.Fields(expr)
	if len(fields) != len(cronFields) {
		return err
	}
	for i, f := range fields {
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		if _, ferr := cronParser.Parse(strings.Join(probe, " ")); ferr != nil {
			return fmt.Errorf("the %s field %q: %w", cronFields[i], f, ferr)
		}
	}
	return err
}

// ValidateTimeZone reports whether name is a time zone of the IANA database, such as
// "Europe/Berlin" or "UTC". Like Karmada, it accepts whatever Go's time.LoadLocation
// accepts, which includes "" (UTC) and "Local" (the controller's zone).
func ValidateTimeZone(name string) error {
	if _, err := time.LoadLocation(name); err != nil {
		return fmt.Errorf("unknown time zone %q: must be an IANA time zone name such as \"Europe/Berlin\"", name)
	}
	return nil
}
