package validationadmission

import (
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxReviewBytes bounds a request body; the API server sends at most the
// object twice (3 MiB each by default) plus the review's own fields.
const maxReviewBytes = 7 << 20

// Handler serves the same checks as a validating admission webhook: it reads
// an admission.k8s.io/v1 AdmissionReview from the request body and answers
// with one whose response allows the object or refuses it with the Invalid
// status Validate returns. A body that is not an AdmissionReview gets HTTP
// 400. Point a ValidatingWebhookConfiguration at it for CREATE and UPDATE of
// Resources().
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
			err := json.Unmarshal(req.Object.Raw, &obj)
			if err == nil {
				gr := schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
				err = Validate(gr, schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}, req.Name, obj)
			}
			if err != nil {
				resp.Allowed = false
				if s, ok := err.(apierrors.APIStatus); ok {
					st := s.Status()
					resp.Result = &st
				} else {
					resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: err.Error()}
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
