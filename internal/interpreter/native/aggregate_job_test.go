package native

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Job statuses as members report them, and the conditions AggregateStatus writes.
const (
	jobRunning10 = `{"active":2,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`

	failureTarget1130 = `{"type":"FailureTarget","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a,c",
		"lastProbeTime":"2026-03-01T11:30:00Z","lastTransitionTime":"2026-03-01T11:30:00Z"}`
	failed1130 = `{"type":"Failed","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a,c",
		"lastProbeTime":"2026-03-01T11:30:00Z","lastTransitionTime":"2026-03-01T11:30:00Z"}`
)

// memberJob is a member's Job status: active, succeeded and failed pods, start time (hh:mm on
// 2026-03-01, "" for none), and a finished state ("Complete hh:mm", "Failed hh:mm" or "").
func memberJob(active, succeeded, failed int, start, finished string) string {
	doc := fmt.Sprintf(`{"active":%d,"succeeded":%d,"failed":%d`, active, succeeded, failed)
	if start != "" {
		doc += fmt.Sprintf(`,"startTime":"2026-03-01T%s:00Z"`, start)
	}
	var kind, at string
	if _, err := fmt.Sscanf(finished, "%s %s", &kind, &at); err == nil {
		ts := fmt.Sprintf("2026-03-01T%s:00Z", at)
		interim := map[string]string{"Complete": "SuccessCriteriaMet", "Failed": "FailureTarget"}[kind]
		doc += fmt.Sprintf(`,"conditions":[{"type":%q,"status":"True","lastTransitionTime":%q},{"type":%q,"status":"True","lastTransitionTime":%q}]`,
			interim, ts, kind, ts)
		if kind == "Complete" {
			doc += fmt.Sprintf(`,"completionTime":%q`, ts)
		}
	}
	return doc + "}"
}

func TestAggregateStatusJob(t *testing.T) {
	runAggregateCases(t, []aggCase{
		{
			name:     "running everywhere: counts summed, earliest start, no conditions",
			template: job("j").obj(),
			items:    items{item("a", jobRunning10), item("b", `{"active":1,"failed":1,"startTime":"2026-03-01T09:00:00Z"}`)},
			want:     `{"active":3,"succeeded":1,"failed":1,"startTime":"2026-03-01T09:00:00Z"}`,
		},
		{
			name:     "complete everywhere: SuccessCriteriaMet then Complete, the latest completion time",
			template: job("j").status(jobRunning10).obj(),
			items:    items{item("a", memberJob(0, 3, 0, "10:00", "Complete 10:05")), item("b", memberJob(0, 2, 0, "10:01", "Complete 10:07"))},
			want: `{"succeeded":5,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:07:00Z",
				"conditions":[{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed",
					"lastProbeTime":"2026-03-01T10:07:00Z","lastTransitionTime":"2026-03-01T10:07:00Z"},
					{"type":"Complete","status":"True","reason":"Completed","message":"Job completed",
					"lastProbeTime":"2026-03-01T10:07:00Z","lastTransitionTime":"2026-03-01T10:07:00Z"}]}`,
		},
		{
			name:     "complete in one cluster only: no condition, no completion time",
			template: job("j").obj(),
			items:    items{item("a", memberJob(0, 3, 0, "10:00", "Complete 10:05")), item("b", `{"active":1,"startTime":"2026-03-01T10:00:00Z"}`)},
			want:     `{"active":1,"succeeded":3,"startTime":"2026-03-01T10:00:00Z"}`,
		},
		{
			name:     "failed in one cluster while another still runs pods: FailureTarget now, Failed waits for the pods",
			template: job("j").obj(),
			items: items{
				item("a", memberJob(0, 0, 6, "11:00", "Failed 11:00")),
				item("b", memberJob(1, 0, 0, "11:00", "")),
				item("c", memberJob(0, 0, 6, "11:10", "Failed 11:30")),
			},
			want: `{"active":1,"failed":12,"startTime":"2026-03-01T11:00:00Z","conditions":[` + failureTarget1130 + `]}`,
		},
		{
			name:     "failed in some clusters and no pod active anywhere: FailureTarget and Failed naming them",
			template: job("j").obj(),
			items: items{
				item("a", memberJob(0, 0, 6, "11:00", "Failed 11:00")),
				item("b", memberJob(0, 1, 0, "11:00", "")),
				item("c", memberJob(0, 0, 6, "11:10", "Failed 11:30")),
			},
			want: `{"succeeded":1,"failed":12,"startTime":"2026-03-01T11:00:00Z","conditions":[` + failureTarget1130 + `,` + failed1130 + `]}`,
		},
		{
			name: "the last active pod is gone: Failed follows the FailureTarget already on the template, which stays as it was",
			template: job("j").status(`{"active":1,"failed":6,"startTime":"2026-03-01T11:00:00Z","conditions":[{"type":"FailureTarget","status":"True",
				"reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"}]}`).obj(),
			items: items{item("a", memberJob(0, 0, 6, "11:00", "Failed 11:00")), item("b", memberJob(0, 2, 0, "11:00", "Complete 11:20"))},
			want: `{"succeeded":2,"failed":6,"startTime":"2026-03-01T11:00:00Z","conditions":[
				{"type":"FailureTarget","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"},
				{"type":"Failed","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a",
				"lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"}]}`,
		},
		{
			name: "a failing Job never turns to success, even when every cluster now reports Complete",
			template: job("j").status(`{"failed":1,"startTime":"2026-03-01T11:00:00Z","conditions":[{"type":"FailureTarget","status":"True",
				"reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"}]}`).obj(),
			items: items{item("a", memberJob(0, 1, 0, "11:05", "Complete 11:10"))},
			want: `{"succeeded":1,"failed":1,"startTime":"2026-03-01T11:00:00Z","conditions":[
				{"type":"FailureTarget","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"},
				{"type":"Failed","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a",
				"lastProbeTime":"2026-03-01T11:00:00Z","lastTransitionTime":"2026-03-01T11:00:00Z"}]}`,
		},
		{
			name: "a Job that met its success criteria never turns to failure when a cluster fails later",
			template: job("j").status(`{"active":1,"succeeded":2,"startTime":"2026-03-01T10:00:00Z","conditions":[{"type":"SuccessCriteriaMet","status":"True",
				"reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:05:00Z","lastTransitionTime":"2026-03-01T10:05:00Z"}]}`).obj(),
			items: items{item("a", memberJob(0, 2, 0, "10:00", "Complete 10:05")), item("b", memberJob(0, 0, 1, "10:00", "Failed 10:09"))},
			want: `{"succeeded":2,"failed":1,"startTime":"2026-03-01T10:00:00Z","conditions":[{"type":"SuccessCriteriaMet","status":"True",
				"reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:05:00Z","lastTransitionTime":"2026-03-01T10:05:00Z"}]}`,
		},
		{
			name:     "startTime once set is kept, even when a cluster reports an earlier start (it is immutable)",
			template: job("j").status(`{"active":2,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			items:    items{item("a", jobRunning10), item("b", memberJob(1, 0, 0, "09:58", ""))},
			want:     `{"active":3,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`,
		},
		{
			name: "a suspended Job's startTime follows its members, which clear it",
			template: job("j").spec(`{"suspend":true}`).
				status(`{"active":2,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			items: items{item("a", memberJob(0, 0, 0, "", "")), item("b", memberJob(0, 0, 0, "", ""))},
			want:  `{}`,
		},
		{
			name:     "a cluster that left does not take its pods off the succeeded and failed counts",
			template: job("j").status(`{"active":4,"succeeded":5,"failed":2,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			items:    items{item("a", memberJob(2, 3, 0, "10:00", ""))},
			want:     `{"active":2,"succeeded":5,"failed":2,"startTime":"2026-03-01T10:00:00Z"}`,
		},
		{
			name:     "complete everywhere with pods still counted active: SuccessCriteriaMet only, Complete waits",
			template: job("j").obj(),
			items:    items{item("a", memberJob(1, 3, 0, "10:00", "Complete 10:05"))},
			want: `{"active":1,"succeeded":3,"startTime":"2026-03-01T10:00:00Z","conditions":[{"type":"SuccessCriteriaMet","status":"True",
				"reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:05:00Z","lastTransitionTime":"2026-03-01T10:05:00Z"}]}`,
		},
		{
			name:     "members complete without completionTime: their Complete condition's time stands in",
			template: job("j").obj(),
			items: items{item("a", `{"succeeded":1,"startTime":"2026-03-01T10:00:00Z","conditions":[
				{"type":"Complete","status":"True","lastTransitionTime":"2026-03-01T10:04:00Z"}]}`)},
			want: `{"succeeded":1,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:04:00Z","conditions":[
				{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:04:00Z","lastTransitionTime":"2026-03-01T10:04:00Z"},
				{"type":"Complete","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:04:00Z","lastTransitionTime":"2026-03-01T10:04:00Z"}]}`,
		},
		{
			name:     "a completion earlier than the kept startTime (clock skew between members) is raised to it",
			template: job("j").status(`{"active":1,"startTime":"2026-03-01T10:10:00Z"}`).obj(),
			items:    items{item("a", memberJob(0, 1, 0, "10:01", "Complete 10:05"))},
			want: `{"succeeded":1,"startTime":"2026-03-01T10:10:00Z","completionTime":"2026-03-01T10:10:00Z","conditions":[
				{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:05:00Z","lastTransitionTime":"2026-03-01T10:05:00Z"},
				{"type":"Complete","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:05:00Z","lastTransitionTime":"2026-03-01T10:05:00Z"}]}`,
		},
		{
			name:     "failed before any member reported a start: the failure time becomes startTime",
			template: job("j").obj(),
			items:    items{item("a", memberJob(0, 0, 0, "", "Failed 12:00"))},
			want: `{"startTime":"2026-03-01T12:00:00Z","conditions":[
				{"type":"FailureTarget","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T12:00:00Z","lastTransitionTime":"2026-03-01T12:00:00Z"},
				{"type":"Failed","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T12:00:00Z","lastTransitionTime":"2026-03-01T12:00:00Z"}]}`,
		},
		{
			name:     "a finished template is final",
			template: job("j").status(`{"succeeded":5,"conditions":[{"type":"Complete","status":"True"}]}`).obj(),
			items:    items{item("a", `{"active":1}`)},
			want:     `{"succeeded":5,"conditions":[{"type":"Complete","status":"True"}]}`,
			same:     true,
		},
		{
			name:     "no clusters: left alone rather than declared complete",
			template: job("j").status(`{"active":1}`).obj(),
			want:     `{"active":1}`,
			same:     true,
		},
		{
			name:     "a cluster not reported yet keeps the Job incomplete",
			template: job("j").obj(),
			items:    items{item("a", memberJob(0, 1, 0, "10:00", "Complete 10:05")), item("b", "")},
			want:     `{"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`,
		},
		{
			name:     "unchanged status: the template itself",
			template: job("j").status(`{"active":3,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			items:    items{item("a", jobRunning10), item("b", `{"active":1}`)},
			want:     `{"active":3,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`,
			same:     true,
		},
		{name: "a malformed member status is an error", template: job("j").obj(), items: items{item("a", `{"active":"x"}`)}, wantErr: true},
	})
}

// TestAggregateStatusJobOverTime feeds each aggregated status back as the template's, as the
// status controller does, and checks that the API server accepts every one of the writes.
func TestAggregateStatusJobOverTime(t *testing.T) {
	tests := []struct {
		name  string
		steps []items // the member reports at each resync
		want  string  // the template's final status
	}{
		{
			name: "a cluster reporting late with an earlier start never moves startTime, through to completion",
			steps: []items{
				{item("member1", memberJob(4, 0, 0, "10:00", "")), item("member2", "")},
				{item("member1", memberJob(4, 0, 0, "10:00", "")), item("member2", memberJob(6, 0, 0, "09:59", ""))},
				{item("member1", memberJob(0, 4, 0, "10:00", "Complete 10:20")), item("member2", memberJob(1, 5, 0, "09:59", ""))},
				{item("member1", memberJob(0, 4, 0, "10:00", "Complete 10:20")), item("member2", memberJob(0, 6, 0, "09:59", "Complete 10:25"))},
			},
			want: `{"succeeded":10,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:25:00Z","conditions":[
				{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:25:00Z","lastTransitionTime":"2026-03-01T10:25:00Z"},
				{"type":"Complete","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:25:00Z","lastTransitionTime":"2026-03-01T10:25:00Z"}]}`,
		},
		{
			name: "failure in one cluster while the other runs: FailureTarget, then Failed once its pods stop",
			steps: []items{
				{item("a", memberJob(2, 0, 0, "11:00", "")), item("c", memberJob(2, 0, 0, "11:00", ""))},
				{item("a", memberJob(0, 0, 6, "11:00", "Failed 11:10")), item("c", memberJob(2, 1, 0, "11:00", ""))},
				{item("a", memberJob(0, 0, 6, "11:00", "Failed 11:10")), item("c", memberJob(0, 1, 6, "11:00", "Failed 11:30"))},
			},
			want: `{"succeeded":1,"failed":12,"startTime":"2026-03-01T11:00:00Z","conditions":[
				{"type":"FailureTarget","status":"True","reason":"JobFailed","message":"Job executed failed in member clusters a","lastProbeTime":"2026-03-01T11:10:00Z","lastTransitionTime":"2026-03-01T11:10:00Z"},
				` + failed1130 + `]}`,
		},
		{
			name: "a cluster leaving mid-run, then the rest completing",
			steps: []items{
				{item("a", memberJob(2, 1, 1, "10:00", "")), item("b", memberJob(2, 2, 0, "10:00", ""))},
				{item("a", memberJob(2, 2, 1, "10:00", ""))},
				{item("a", memberJob(0, 4, 1, "10:00", "Complete 10:30"))},
			},
			want: `{"succeeded":4,"failed":1,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:30:00Z","conditions":[
				{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:30:00Z","lastTransitionTime":"2026-03-01T10:30:00Z"},
				{"type":"Complete","status":"True","reason":"Completed","message":"Job completed","lastProbeTime":"2026-03-01T10:30:00Z","lastTransitionTime":"2026-03-01T10:30:00Z"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			template := job("batch").namespace("t").obj()
			template = aggregateSteps(t, template, tt.steps)
			if diff := cmp.Diff(decodeJSON(t, []byte(tt.want)), statusJSON(t, template)); diff != "" {
				t.Errorf("final status mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
