package e2e

import (
	"testing"
)

// TestMemberOwnedFieldsAreKept propagates a Job with a TTL to two members:
// the TTL is not sent (a member's TTL controller would delete the finished
// Job and Flotilla would create it again), and a label added to the template
// later reaches the member's Job in place, its generated selector and pod
// labels kept (they are immutable). A Deployment labelled retain-replicas
// keeps the replica count its member set.
func TestMemberOwnedFieldsAreKept(t *testing.T) {
	s := sharedStackOf(t, 2)
	s.kubectl("", "create", "namespace", "t")
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: report, namespace: t}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: report}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
	s.mustApply(t, "", `apiVersion: batch/v1
kind: Job
metadata: {name: report, namespace: t, labels: {app: report}}
spec:
  ttlSecondsAfterFinished: 30
  backoffLimit: 0
  template:
    metadata: {labels: {app: report}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "busybox:1.36"}]
`)

	uids := map[string]string{}
	for _, m := range []string{"member1", "member2"} {
		s.waitFor(t, "report", m, "job", "report", "-n", "t", "-o", "jsonpath={.metadata.name}")
		if ttl := s.get(m, "job", "report", "-n", "t", "-o", "jsonpath={.spec.ttlSecondsAfterFinished}"); ttl != "" {
			t.Errorf("%s: the Job was sent with ttlSecondsAfterFinished %s; Karmada's prune step does not send it", m, ttl)
		}
		uids[m] = s.get(m, "job", "report", "-n", "t", "-o", "jsonpath={.metadata.uid}")
	}
	work := s.get("member1", "job", "report", "-n", "t", "-o", `jsonpath={.metadata.annotations.work\.karmada\.io/name}`)
	if work == "" {
		t.Fatal("the member1 Job does not name its Work (work.karmada.io/name)")
	}
	if ttl := s.get("", "work", work, "-n", "karmada-es-member1", "-o", "jsonpath={.spec.workload.manifests[0].spec.ttlSecondsAfterFinished}"); ttl != "" {
		t.Errorf("the Work manifest holds ttlSecondsAfterFinished %s", ttl)
	}

	s.kubectl("", "label", "job", "report", "-n", "t", "run=2")
	s.waitFor(t, "2", "member1", "job", "report", "-n", "t", "-o", "jsonpath={.metadata.labels.run}")
	s.waitFor(t, "True", "", "work", work, "-n", "karmada-es-member1", "-o", "jsonpath={.status.conditions[?(@.type=='Applied')].status}")
	for _, m := range []string{"member1", "member2"} {
		s.waitFor(t, "2", m, "job", "report", "-n", "t", "-o", "jsonpath={.metadata.labels.run}")
		if got := s.get(m, "job", "report", "-n", "t", "-o", "jsonpath={.metadata.uid}"); got != uids[m] {
			t.Errorf("%s: the Job was re-created (uid %s, was %s); it should have been updated in place", m, got, uids[m])
		}
		sel := s.get(m, "job", "report", "-n", "t", "-o", `jsonpath={.spec.selector.matchLabels.batch\.kubernetes\.io/controller-uid}`)
		if sel != uids[m] {
			t.Errorf("%s: the Job's selector is %q, want the one its API server generated from its uid %s", m, sel, uids[m])
		}
	}

	// A Deployment labelled resourcetemplate.karmada.io/retain-replicas:
	// what scales the member's copy (an HPA there; kubectl scale here) is
	// kept when the template changes, and the Work is still Applied.
	s.mustApply(t, "", deploymentYAML("t", "web", 2, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: t}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
	s.kubectl("", "label", "deploy", "web", "-n", "t", "resourcetemplate.karmada.io/retain-replicas=true")
	s.waitFor(t, "true", "member1", "deploy", "web", "-n", "t", "-o", `jsonpath={.metadata.labels.resourcetemplate\.karmada\.io/retain-replicas}`)
	s.kubectl("member1", "scale", "deploy", "web", "-n", "t", "--replicas=5")
	s.kubectl("", "label", "deploy", "web", "-n", "t", "tier=front")
	s.waitFor(t, "front", "member1", "deploy", "web", "-n", "t", "-o", "jsonpath={.metadata.labels.tier}")
	s.waitFor(t, "5", "member1", "deploy", "web", "-n", "t", "-o", "jsonpath={.spec.replicas}")
	webWork := s.get("member1", "deploy", "web", "-n", "t", "-o", `jsonpath={.metadata.annotations.work\.karmada\.io/name}`)
	s.waitFor(t, "True", "", "work", webWork, "-n", "karmada-es-member1", "-o", "jsonpath={.status.conditions[?(@.type=='Applied')].status}")
	// Without the label the template's count wins again.
	s.kubectl("", "label", "deploy", "web", "-n", "t", "resourcetemplate.karmada.io/retain-replicas-")
	s.waitFor(t, "2", "member1", "deploy", "web", "-n", "t", "-o", "jsonpath={.spec.replicas}")
}
