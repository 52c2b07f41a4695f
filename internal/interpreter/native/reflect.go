package native

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceTemplateGenerationAnnotation is Karmada's annotation carrying, on an object applied to
// a member cluster, the metadata.generation of the resource template it was rendered from
// (a decimal integer). ReflectStatus copies it into the reflected status of workloads so that
// AggregateStatus can tell whether every cluster runs the template's latest generation.
const ResourceTemplateGenerationAnnotation = "resourcetemplate.karmada.io/generation"

// Keys that ReflectStatus adds next to a workload's status counters (Karmada's
// FederatedGeneration, inlined into the reflected status).
const (
	// reflectedGenerationKey holds the member object's metadata.generation.
	reflectedGenerationKey = "generation"
	// reflectedTemplateGenerationKey holds the member object's
	// ResourceTemplateGenerationAnnotation value.
	reflectedTemplateGenerationKey = "resourceTemplateGeneration"
	observedGenerationKey          = "observedGeneration"
)

// workloadCounters lists, per replicated workload kind, the integer status fields reflected from
// each member and summed into the resource template.
var workloadCounters = map[schema.GroupKind][]string{
	deploymentKind:  {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"},
	statefulSetKind: {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
	replicaSetKind:  {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"},
	daemonSetKind: {
		"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
		"updatedNumberScheduled", "numberAvailable", "numberUnavailable",
	},
}

// reflectedFields lists, for kinds whose status is reflected in part, the status fields kept.
var reflectedFields = map[schema.GroupKind][]string{
	jobKind: {"active", "succeeded", "failed", "conditions", "startTime", "completionTime"},
	pdbKind: {"disruptionsAllowed", "expectedPods", "desiredHealthy", "currentHealthy", "disruptedPods"},
	hpaKind: {"currentReplicas", "desiredReplicas"},
}

// ReflectStatus implements Karmada's InterpretStatus operation: it returns the part of a member
// object's status that is recorded in Work.status.manifestStatuses[].status (and from there in
// ResourceBinding.status.aggregatedStatus[].status), as a JSON object:
//   - Deployment, StatefulSet, ReplicaSet, DaemonSet: the replica counters of the kind and
//     observedGeneration, plus "generation" (the member object's metadata.generation) and
//     "resourceTemplateGeneration" (its ResourceTemplateGenerationAnnotation), which
//     AggregateStatus uses to compute the template's observedGeneration;
//   - Service: {"loadBalancer": ...} for type LoadBalancer, nothing for other types;
//   - Job: active, succeeded, failed, conditions, startTime, completionTime;
//   - PodDisruptionBudget: disruptionsAllowed, expectedPods, desiredHealthy, currentHealthy,
//     disruptedPods; HorizontalPodAutoscaler: currentReplicas, desiredReplicas;
//   - every other kind, Ingress, Pod and PersistentVolumeClaim included: the whole status.
//
// Zero counters are omitted, as in a typed status. It returns nil, with no error, when obj has
// no status (or the kind reflects nothing), and an error when the status or the generation
// annotation is malformed.
func ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	if obj == nil {
		return nil, nil
	}
	status, found, err := unstructured.NestedFieldNoCopy(obj.Object, "status")
	if err != nil || !found || status == nil {
		return nil, err
	}
	statusMap, ok := status.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("reflecting the status of %s: status is a %T, not an object", describe(obj), status)
	}
	gk := groupKindOf(obj)
	if counters, ok := workloadCounters[gk]; ok {
		return reflectWorkload(obj, statusMap, counters)
	}
	if gk == serviceKind {
		return reflectService(obj, statusMap)
	}
	if fields, ok := reflectedFields[gk]; ok {
		return rawJSON(obj, pick(statusMap, fields))
	}
	return rawJSON(obj, statusMap)
}

func reflectWorkload(obj *unstructured.Unstructured, status map[string]any, counters []string) (*runtime.RawExtension, error) {
	out := make(map[string]any, len(counters)+3)
	for _, c := range append([]string{observedGenerationKey}, counters...) {
		if v := intValue(status, c); v != 0 {
			out[c] = v
		}
	}
	if g := obj.GetGeneration(); g != 0 {
		out[reflectedGenerationKey] = g
	}
	if v, ok := obj.GetAnnotations()[ResourceTemplateGenerationAnnotation]; ok {
		g, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reflecting the status of %s: annotation %s=%q is not an integer: %w",
				describe(obj), ResourceTemplateGenerationAnnotation, v, err)
		}
		if g != 0 {
			out[reflectedTemplateGenerationKey] = g
		}
	}
	return rawJSON(obj, out)
}

func reflectService(obj *unstructured.Unstructured, status map[string]any) (*runtime.RawExtension, error) {
	svcType, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if svcType != "LoadBalancer" {
		return nil, nil
	}
	return rawJSON(obj, pick(status, []string{"loadBalancer"}))
}

// pick returns the fields of m named in keys that are present.
func pick(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func rawJSON(obj *unstructured.Unstructured, v map[string]any) (*runtime.RawExtension, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("reflecting the status of %s: %w", describe(obj), err)
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// Observed reports whether the member controllers have caught up with obj:
// for the replicated workload kinds (Deployment, StatefulSet, ReplicaSet,
// DaemonSet), status.observedGeneration >= metadata.generation; every other
// kind is always observed. The execution controller uses it to hold a new
// object's first status report until its status means something, so a Work
// gets one status write instead of one per controller step.
func Observed(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	if _, ok := workloadCounters[groupKindOf(obj)]; !ok {
		return true
	}
	status, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status")
	m, _ := status.(map[string]any)
	return intValue(m, observedGenerationKey) >= obj.GetGeneration()
}
