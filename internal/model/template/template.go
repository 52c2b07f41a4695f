// Package template says which objects on the control plane are resource
// templates: the objects Karmada propagates when a policy selects them. The
// detector watches them and the control plane's admission plugin claims them
// as they are created, both by these rules.
package template

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// skippedGroups are API groups whose objects are never resource templates:
// Karmada's own APIs, and machinery of the control plane itself.
// EndpointSlices (discovery.k8s.io) are templates: the slices imported from
// exporting members reach the consumers as a ServiceImport's dependencies.
var skippedGroups = map[string]bool{
	"cluster.karmada.io": true, "policy.karmada.io": true, "work.karmada.io": true,
	"config.karmada.io": true, "autoscaling.karmada.io": true, "networking.karmada.io": true,
	"apps.karmada.io": true, "remedy.karmada.io": true, "search.karmada.io": true,
	"coordination.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "apiregistration.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true,
	"internal.apiserver.k8s.io": true, "storagemigration.k8s.io": true,
}

// skippedCoreResources are core resources that are never templates;
// namespaces follow members through the namespace controller instead.
var skippedCoreResources = map[string]bool{
	"events": true, "nodes": true, "namespaces": true, "endpoints": true,
	"componentstatuses": true, "bindings": true,
}

// IsTemplateResource reports whether objects of resource gvr are resource
// templates the detector watches (kinds of skipped groups and core kinds such
// as events and nodes are not).
func IsTemplateResource(gvr schema.GroupVersionResource) bool {
	return !skippedGroups[gvr.Group] && !(gvr.Group == "" && skippedCoreResources[gvr.Resource])
}

// SkipNamespace reports whether templates in ns are ignored, as in Karmada:
// the control plane's own namespaces and the execution namespaces.
func SkipNamespace(ns string) bool {
	switch ns {
	case "karmada-system", "karmada-cluster", "kube-system", "kube-public", "kube-node-lease":
		return true
	}
	return strings.HasPrefix(ns, "karmada-es-")
}

// FingerprintAnnotation on a binding records what of its template
// the binding was last written from, other than status (see Fingerprint).
const FingerprintAnnotation = "flotilla.io/template-fingerprint"

// Fingerprint identifies a template's non-status content: its generation
// (bumped by every spec change) and a hash of its labels and annotations.
// It is empty for kinds without a generation, whose every change counts.
func Fingerprint(obj *unstructured.Unstructured) string {
	if obj.GetGeneration() == 0 {
		return ""
	}
	h := fnv.New64a()
	for _, m := range []map[string]string{obj.GetLabels(), obj.GetAnnotations()} {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			fmt.Fprintf(h, "%s=%s\x00", k, m[k])
		}
		h.Write([]byte{1})
	}
	return fmt.Sprintf("%d-%x", obj.GetGeneration(), h.Sum64())
}

// Matches reports whether tmpl is the version of the template that binding
// b was last written from, or one that differs from it only in status: the
// same resourceVersion, or the same Fingerprint as b records. Resource
// versions are compared for equality only.
func Matches(tmpl *unstructured.Unstructured, b interface {
	GetAnnotations() map[string]string
}, recordedResourceVersion string) bool {
	if tmpl.GetResourceVersion() == recordedResourceVersion {
		return true
	}
	fp := Fingerprint(tmpl)
	return fp != "" && b.GetAnnotations()[FingerprintAnnotation] == fp
}

// ChangedByUser reports whether newer differs from older in what Karmada's lazy activation
// counts as a change of the resource template (activationPreference: Lazy): any field but
// status, metadata.resourceVersion, metadata.generation and metadata.managedFields, and labels
// or annotations whose key's prefix is karmada.io or ends in .karmada.io (the claim metadata
// the control plane itself writes). A claim written by the detector is therefore no change; a
// user's label, annotation or spec edit is.
func ChangedByUser(older, newer *unstructured.Unstructured) bool {
	if older == nil || newer == nil {
		return older != newer
	}
	gen := newer.GetGeneration()
	// With a generation (bumped by every spec change), equal generations leave only metadata to
	// compare; without one (ConfigMaps, Secrets, ...) every top-level field is compared.
	if gen == 0 || gen != older.GetGeneration() {
		for k := range mergedKeys(older.Object, newer.Object) {
			if k == "status" || k == "metadata" {
				continue
			}
			if !equality.Semantic.DeepEqual(older.Object[k], newer.Object[k]) {
				return true
			}
		}
	}
	om, _, _ := unstructured.NestedMap(older.Object, "metadata")
	nm, _, _ := unstructured.NestedMap(newer.Object, "metadata")
	for k := range mergedKeys(om, nm) {
		switch k {
		case "resourceVersion", "generation", "managedFields", "labels", "annotations":
			continue
		}
		if !equality.Semantic.DeepEqual(om[k], nm[k]) {
			return true
		}
	}
	return !userKeysEqual(older.GetLabels(), newer.GetLabels()) || !userKeysEqual(older.GetAnnotations(), newer.GetAnnotations())
}

// mergedKeys is the set of keys of a and b.
func mergedKeys(a, b map[string]any) map[string]struct{} {
	keys := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		keys[k] = struct{}{}
	}
	for k := range b {
		keys[k] = struct{}{}
	}
	return keys
}

// userKeysEqual compares two label or annotation maps, ignoring Karmada's keys.
func userKeysEqual(a, b map[string]string) bool {
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if IsKarmadaKey(k) {
				continue
			}
			va, okA := a[k]
			vb, okB := b[k]
			if okA != okB || va != vb {
				return false
			}
		}
	}
	return true
}

// IsKarmadaKey reports whether a label or annotation key belongs to Karmada's domain: its prefix
// (before "/") is karmada.io or ends in .karmada.io, as propagationpolicy.karmada.io/name does.
func IsKarmadaKey(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	return found && (prefix == "karmada.io" || strings.HasSuffix(prefix, ".karmada.io"))
}
