package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestFederatedHPABoundsAndFailures checks what the FederatedHPA controller
// does before any metric is served: it brings a target outside
// [minReplicas, maxReplicas] within them (the scheduler divides the new
// count), says AbleToScale False for a target without a scale subresource,
// and ScalingActive False with a FailedGetResourceMetric event when the
// metrics cannot be had; nothing panics and the status says why.
func TestFederatedHPABoundsAndFailures(t *testing.T) {
	s := startStack(t, 2)
	ns := "fhpa"
	s.kubectl("", "create", "namespace", ns)
	s.mustApply(t, "", deploymentYAML(ns, "web", 1, "nginx")+"---\n"+policyTo(ns, "web", "Deployment", "web", "member1", "member2")+"---\n"+federatedHPA(ns, "web", "web", 4, 10))

	// Below minReplicas: scaled to 4 at the first sync, divided by the scheduler.
	s.waitFor(t, "4", "", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
	eventually(t, 2*time.Minute, "the 4 replicas divided between member1 and member2", func() (bool, string) {
		a, b := s.get("member1", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}"), s.get("member2", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
		return (a == "2" && b == "2") || (a == "4" && b == "") || (a == "" && b == "4") || (a == "3" && b == "1") || (a == "1" && b == "3"), a + "+" + b
	})
	s.waitFor(t, "SuccessfulRescale", "", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,involvedObject.name=web,reason=SuccessfulRescale", "-o", "jsonpath={.items[0].reason}")
	if msg := s.get("", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,reason=SuccessfulRescale", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "New size: 4; reason: Current number of replicas below Spec.MinReplicas") {
		t.Errorf("rescale event message %q", msg)
	}
	s.waitFor(t, "4/4", "", "fhpa", "web", "-n", ns, "-o", "jsonpath={.status.currentReplicas}/{.status.desiredReplicas}")
	// No metrics API on the control plane yet: ScalingActive says so.
	s.waitFor(t, "False/FailedGetResourceMetric", "", "fhpa", "web", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="ScalingActive")].status}/{.status.conditions[?(@.type=="ScalingActive")].reason}`)
	s.waitFor(t, "FailedGetResourceMetric", "", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,reason=FailedGetResourceMetric", "-o", "jsonpath={.items[0].reason}")

	// A target without a scale subresource.
	s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: fhpa}
---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: conf, namespace: fhpa}
spec:
  scaleTargetRef: {apiVersion: v1, kind: ConfigMap, name: conf}
  maxReplicas: 3
`)
	s.waitFor(t, "False/FailedGetScale", "", "fhpa", "conf", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}/{.status.conditions[?(@.type=="AbleToScale")].reason}`)
	if msg := s.get("", "fhpa", "conf", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="AbleToScale")].message}`); !strings.Contains(msg, "no scale subresource") {
		t.Errorf("AbleToScale message %q does not say why", msg)
	}
}
