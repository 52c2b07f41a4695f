package defaultingadmission

import (
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxReviewBytes bounds a request body; the API server sends at most the object twice (3 MiB
// each by default) plus the review's own fields.
const maxReviewBytes = 7 << 20

// Handler serves the same defaulting as a mutating admission webhook: it reads an
// admission.k8s.io/v1 AdmissionReview from the request body and answers with one that allows
// the object, with a JSONPatch of the defaults when there are any. A body that is not an
// AdmissionReview gets HTTP 400. Point a MutatingWebhookConfiguration at it for CREATE and
// UPDATE of Resources().
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReviewBytes)).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("want an admission.k8s.io/v1 AdmissionReview with a request: %v", err), http.StatusBadRequest)
			return
		}
		req := review.Request
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		if req.SubResource == "" && len(req.Object.Raw) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(req.Object.Raw, &obj); err == nil {
				gr := schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
				if ops := Default(gr, obj); len(ops) > 0 {
					if patch, err := json.Marshal(ops); err == nil {
						pt := admissionv1.PatchTypeJSONPatch
						resp.Patch, resp.PatchType = patch, &pt
					}
				}
			}
		}
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		if out.APIVersion == "" {
			out.APIVersion, out.Kind = admissionv1.SchemeGroupVersion.String(), "AdmissionReview"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}
