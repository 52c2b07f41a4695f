// Package webhook serves Flotilla's kube-apiserver admission plugins
// as admission webhooks, for a control plane whose API server Flotilla does
// not embed (`flotilla webhook`). The plugin code is the same in both places:
// this package only translates an admission.k8s.io/v1 AdmissionReview into
// the plugin's admission.Attributes and the plugin's result back into the
// review's response.
package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

// maxReviewBytes bounds a request body: the API server sends at most the
// object twice (3 MiB each by default) plus the review's own fields.
const maxReviewBytes = 7 << 20

// Handler serves plugin as an admission webhook. It reads an
// admission.k8s.io/v1 AdmissionReview from the request body and answers with
// one whose response:
//   - for a mutating plugin (admission.MutationInterface), allows the object
//     with a JSONPatch (RFC 6902) of what the plugin's Admit changed, if
//     anything;
//   - for a validating plugin (admission.ValidationInterface), allows it or
//     refuses it with the status of the plugin's error (Invalid, 422, for
//     Flotilla's checks).
//
// The object reaches the plugin as *unstructured.Unstructured, as custom
// resources reach admission inside kube-apiserver. Operations the plugin
// does not handle (admission.Interface.Handles) are allowed unchanged. A body
// that is not an AdmissionReview with a request gets HTTP 400.
func Handler(plugin admission.Interface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReviewBytes)).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("want an admission.k8s.io/v1 AdmissionReview with a request: %v", err), http.StatusBadRequest)
			return
		}
		resp := Review(r.Context(), plugin, review.Request)
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		if out.APIVersion == "" {
			out.APIVersion, out.Kind = admissionv1.SchemeGroupVersion.String(), "AdmissionReview"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// Review runs plugin on one admission request and returns the response, as
// Handler describes. A request whose object does not decode is refused with
// 400 Bad Request.
func Review(ctx context.Context, plugin admission.Interface, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	op := admission.Operation(req.Operation)
	if !plugin.Handles(op) {
		return resp
	}
	obj, err := decode(req.Object.Raw)
	if err == nil {
		var old *unstructured.Unstructured
		if old, err = decode(req.OldObject.Raw); err == nil {
			err = run(ctx, plugin, req, op, obj, old, resp)
		}
	}
	if err != nil {
		resp.Allowed, resp.Patch, resp.PatchType = false, nil, nil
		if s, ok := err.(apierrors.APIStatus); ok {
			st := s.Status()
			resp.Result = &st
		} else {
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: err.Error()}
		}
	}
	return resp
}

func run(ctx context.Context, plugin admission.Interface, req *admissionv1.AdmissionRequest, op admission.Operation, obj, old *unstructured.Unstructured, resp *admissionv1.AdmissionResponse) error {
	attrs := admission.NewAttributesRecord(
		runtimeObject(obj), runtimeObject(old),
		schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind},
		req.Namespace, req.Name,
		schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		req.SubResource, op, nil, req.DryRun != nil && *req.DryRun, userInfo(req.UserInfo))
	if m, ok := plugin.(admission.MutationInterface); ok && obj != nil {
		before, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if err := m.Admit(ctx, attrs, nil); err != nil {
			return err
		}
		after, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		ops, err := jsonpatch.CreatePatch(before, after)
		if err != nil {
			return err
		}
		if len(ops) > 0 {
			patch, err := json.Marshal(ops)
			if err != nil {
				return err
			}
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		}
	}
	if v, ok := plugin.(admission.ValidationInterface); ok {
		return v.Validate(ctx, attrs, nil)
	}
	return nil
}

// decode reads an object of the review; an empty one is nil.
func decode(raw []byte) (*unstructured.Unstructured, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return nil, fmt.Errorf("decode the object under review: %w", err)
	}
	return u, nil
}

// runtimeObject keeps a nil object an untyped nil for the attributes.
func runtimeObject(u *unstructured.Unstructured) runtime.Object {
	if u == nil {
		return nil
	}
	return u
}

func userInfo(u authenticationv1.UserInfo) user.Info {
	extra := make(map[string][]string, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}
