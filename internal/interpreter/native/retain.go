package native

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RetainReplicasLabel is the label that, set to "true" on a Deployment or StatefulSet template (Karmada's
// resourcetemplate.karmada.io/retain-replicas), makes each member cluster keep its own
// copy's spec.replicas: an HPA running in the member scales it, and propagation does not
// revert it to the template's count.
const RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"

// retention is one rule of Retain: it copies into out, the object about to be sent to a member
// cluster, a field the member owns from observed, the member's current copy. It may modify out
// and must not modify observed.
type retention func(out, observed map[string]any) error

// retentions lists, per kind, the fields a member cluster owns: Karmada's default interpreter
// Retain operation for built-in kinds. The few rules of Flotilla's own are marked.
var retentions = map[schema.GroupKind][]retention{
	// A Pod's spec is immutable but for images, tolerations and activeDeadlineSeconds: what the
	// member's scheduler and service-account admission set there must be sent back unchanged.
	podKind: {
		mirror("spec", "nodeName"),
		mirror("spec", "serviceAccountName"),
		mirror("spec", "volumes"),
		mirrorPerContainer("containers", "volumeMounts"),
		mirrorPerContainer("initContainers", "volumeMounts"),
	},
	// Addresses and ports the member's API server allocated. Only while the Service still
	// needs them, so that a change of type is not refused (Flotilla's guard; Karmada copies
	// them whatever the type).
	serviceKind: {
		keep("spec", "clusterIP").when(needsClusterIP),
		keep("spec", "clusterIPs").when(needsClusterIP),
		keep("spec", "healthCheckNodePort").when(needsHealthCheckNodePort),
		// Flotilla's: a manifest that leaves the IP families unset keeps the member's.
		keepIfUnset("spec", "ipFamilies"),
		keepIfUnset("spec", "ipFamilyPolicy"),
	},
	// Secrets the member's controllers added to the account, after the template's own.
	serviceAccountKind: {mergeByName("secrets")},
	// Flotilla's: the member's token controller filled the token in; Karmada sends it empty,
	// which makes the member generate a new one.
	secretKind: {keepIfUnset("data").when(serviceAccountToken)},
	// The volume the member bound the claim to, and the claim the member bound the volume to.
	// A member HPA scales its copy: the template's count must not revert it.
	deploymentKind: {keep("spec", "replicas").when(retainsReplicas)},
	// Flotilla's: the same for StatefulSets, which a member HPA scales alike.
	statefulSetKind: {keep("spec", "replicas").when(retainsReplicas)},
	pvcKind:         {keep("spec", "volumeName")},
	pvKind:          {keep("spec", "claimRef")},
	// The selector the member's API server generated from the Job's uid, and the pod labels
	// matching it: both immutable.
	jobKind: {
		keep("spec", "selector", "matchLabels"),
		keep("spec", "template", "metadata", "labels"),
	},
}

// Retain implements Karmada's Retain interpreter operation for built-in kinds: it returns the
// object to send to a member cluster to update observed, its current copy there, into desired
// (a rendered Work manifest): a copy of desired with the fields the member owns taken from
// observed:
//   - Pod: spec.nodeName, spec.serviceAccountName, spec.volumes and the volumeMounts of each
//     container and init container (matched by name), exactly as the member has them;
//   - Service: spec.clusterIP and spec.clusterIPs unless desired is of type ExternalName;
//     spec.healthCheckNodePort while desired is a LoadBalancer with externalTrafficPolicy
//     Local; spec.ipFamilies and spec.ipFamilyPolicy when desired leaves them unset;
//   - ServiceAccount: secrets, desired's first, then the member's others (by name);
//   - Secret of type kubernetes.io/service-account-token: data when desired has none;
//   - PersistentVolumeClaim: spec.volumeName; PersistentVolume: spec.claimRef;
//   - Job: spec.selector.matchLabels and spec.template.metadata.labels;
//   - Deployment and StatefulSet labelled RetainReplicasLabel=true: spec.replicas, so that
//     an HPA in the member cluster owns its copy's count.
//
// A field is taken from observed when observed has a non-empty value, except the Pod's, which
// observed decides even by their absence. Other kinds get a copy of desired. Metadata every
// kind shares (resourceVersion, labels, annotations, finalizers) is left to the caller, as
// Karmada's execution path handles it before the interpreter. Neither argument is modified.
// The error names the field when observed or desired holds a value of the wrong shape.
func Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := desired.DeepCopy()
	for _, r := range retentions[groupKindOf(desired)] {
		if err := r(out.Object, observed.Object); err != nil {
			return nil, fmt.Errorf("retaining the member's fields of %s: %w", describe(desired), err)
		}
	}
	return out, nil
}

// keep takes observed's value at path when it is set and not empty.
func keep(path ...string) retention {
	return func(out, observed map[string]any) error {
		v, found, err := unstructured.NestedFieldCopy(observed, path...)
		if err != nil {
			return fieldError(path, err)
		}
		if !found || isEmptyValue(v) {
			return nil
		}
		return setField(out, v, path)
	}
}

// keepIfUnset takes observed's value at path when out has none.
func keepIfUnset(path ...string) retention {
	k := keep(path...)
	return func(out, observed map[string]any) error {
		v, found, err := unstructured.NestedFieldNoCopy(out, path...)
		if err != nil {
			return fieldError(path, err)
		}
		if found && !isEmptyValue(v) {
			return nil
		}
		return k(out, observed)
	}
}

// mirror makes out's value at path observed's, removing it when observed has none.
func mirror(path ...string) retention {
	return func(out, observed map[string]any) error {
		v, found, err := unstructured.NestedFieldCopy(observed, path...)
		if err != nil {
			return fieldError(path, err)
		}
		if !found {
			unstructured.RemoveNestedField(out, path...)
			return nil
		}
		return setField(out, v, path)
	}
}

// mirrorPerContainer mirrors field of each container in spec.<list> from the observed container
// of the same name. Containers observed does not have are left as they are.
func mirrorPerContainer(list, field string) retention {
	return func(out, observed map[string]any) error {
		outList, _, err := unstructured.NestedFieldNoCopy(out, "spec", list)
		if err != nil {
			return fieldError([]string{"spec", list}, err)
		}
		obsList, _, err := unstructured.NestedFieldNoCopy(observed, "spec", list)
		if err != nil {
			return fieldError([]string{"spec", list}, err)
		}
		outs, _ := outList.([]any)
		obs, _ := obsList.([]any)
		for _, o := range outs {
			oc, _ := o.(map[string]any)
			if oc == nil {
				continue
			}
			for _, c := range obs {
				mc, _ := c.(map[string]any)
				if mc == nil || mc["name"] != oc["name"] {
					continue
				}
				if err := mirror(field)(oc, mc); err != nil {
					return fieldError([]string{"spec", list, fmt.Sprint(oc["name"])}, err)
				}
				break
			}
		}
		return nil
	}
}

// mergeByName makes the list at path out's elements followed by those of observed whose name
// out's do not have.
func mergeByName(path ...string) retention {
	return func(out, observed map[string]any) error {
		mine, _, err := unstructured.NestedSlice(out, path...)
		if err != nil {
			return fieldError(path, err)
		}
		theirs, _, err := unstructured.NestedSlice(observed, path...)
		if err != nil {
			return fieldError(path, err)
		}
		seen := map[any]bool{}
		for _, e := range mine {
			if m, ok := e.(map[string]any); ok {
				seen[m["name"]] = true
			}
		}
		merged := mine
		for _, e := range theirs {
			m, ok := e.(map[string]any)
			if !ok || seen[m["name"]] {
				continue
			}
			seen[m["name"]] = true
			merged = append(merged, e)
		}
		if len(merged) == len(mine) {
			return nil
		}
		return setField(out, merged, path)
	}
}

// when restricts r to the objects to send that c holds for.
func (r retention) when(c condition) retention {
	return func(out, observed map[string]any) error {
		if !c(out) {
			return nil
		}
		return r(out, observed)
	}
}

// setField stores v, already a copy, at path in obj, creating the maps on the way.
func setField(obj map[string]any, v any, path []string) error {
	m := obj
	for i, p := range path[:len(path)-1] {
		next, found := m[p]
		if !found || next == nil {
			child := map[string]any{}
			m[p] = child
			m = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			return fieldError(path, fmt.Errorf("%s holds a %T, not an object", strings.Join(path[:i+1], "."), next))
		}
		m = child
	}
	m[path[len(path)-1]] = v
	return nil
}

func fieldError(path []string, err error) error {
	return fmt.Errorf("%s: %w", strings.Join(path, "."), err)
}

// isEmptyValue reports whether v is null, "", 0, or an empty object or list: a field a cluster
// has not filled in.
func isEmptyValue(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	n, ok := asInt64(v)
	return ok && n == 0
}
