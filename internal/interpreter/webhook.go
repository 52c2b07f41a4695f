package interpreter

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// ResourceInterpreterContext is the body of an interpreter webhook call and of its answer,
// Karmada's config.karmada.io/v1alpha1 ResourceInterpreterContext wire format.
type ResourceInterpreterContext struct {
	metav1.TypeMeta `json:",inline"`
	Request         *ResourceInterpreterRequest  `json:"request,omitempty"`
	Response        *ResourceInterpreterResponse `json:"response,omitempty"`
}

// ResourceInterpreterRequest is what the webhook is asked.
type ResourceInterpreterRequest struct {
	UID       types.UID                           `json:"uid"`
	Kind      metav1.GroupVersionKind             `json:"kind"`
	Name      string                              `json:"name"`
	Namespace string                              `json:"namespace,omitempty"`
	Operation configv1alpha1.InterpreterOperation `json:"operation"`
	// Object is the template (or, for InterpretStatus and InterpretHealth, the member's object).
	Object runtime.RawExtension `json:"object,omitempty"`
	// ObservedObject is the member's object, for Retain.
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`
	// DesiredReplicas is the replicas to set, for ReviseReplica.
	DesiredReplicas *int32 `json:"replicas,omitempty"`
	// AggregatedStatus are the clusters' statuses, for AggregateStatus.
	AggregatedStatus []workv1alpha2.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceInterpreterResponse is the webhook's answer.
type ResourceInterpreterResponse struct {
	UID        types.UID      `json:"uid"`
	Successful bool           `json:"successful"`
	Status     *RequestStatus `json:"status,omitempty"`
	// Patch is a JSON patch (RFC 6902) to Object, for ReviseReplica, Retain and AggregateStatus.
	Patch               []byte                            `json:"patch,omitempty"`
	PatchType           *string                           `json:"patchType,omitempty"`
	ReplicaRequirements *workv1alpha2.ReplicaRequirements `json:"replicaRequirements,omitempty"`
	Replicas            *int32                            `json:"replicas,omitempty"`
	Dependencies        []DependentObjectReference        `json:"dependencies,omitempty"`
	RawStatus           *runtime.RawExtension             `json:"rawStatus,omitempty"`
	Healthy             *bool                             `json:"healthy,omitempty"`
}

// RequestStatus explains a failed call.
type RequestStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

// DependentObjectReference is one dependency a webhook reports.
type DependentObjectReference struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Request is what the interpreter passes to a Hook.
type Request struct {
	Object           *unstructured.Unstructured
	ObservedObject   *unstructured.Unstructured
	DesiredReplicas  *int32
	AggregatedStatus []workv1alpha2.AggregatedStatusItem
	op               Op
}

// Operation is the operation asked.
func (r Request) Operation() Op { return r.op }

// Response is a Hook's successful answer.
type Response = ResourceInterpreterResponse

func (r *Response) dependencies() ([]native.Dependency, error) {
	var out []native.Dependency
	for i, d := range r.Dependencies {
		dep, err := native.NewDependency(d.APIVersion, d.Kind, d.Namespace, d.Name, d.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("dependency %d: %w", i, err)
		}
		out = append(out, dep)
	}
	return out, nil
}

func (in *Interpreter) call(ctx context.Context, src source, op Op, req Request) (*Response, error) {
	return src.hook.Interpret(ctx, withOp(req, op))
}

// patched calls a hook whose answer is a JSON patch to req.Object and applies it.
func (in *Interpreter) patched(ctx context.Context, src source, op Op, obj *unstructured.Unstructured, req Request) (*unstructured.Unstructured, error) {
	resp, err := in.call(ctx, src, op, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Patch) == 0 {
		return obj.DeepCopy(), nil
	}
	if resp.PatchType != nil && *resp.PatchType != "JSONPatch" {
		return nil, fmt.Errorf("the webhook answered with patchType %q; only JSONPatch is supported", *resp.PatchType)
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return nil, fmt.Errorf("the webhook's patch does not decode: %w", err)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	if doc, err = patch.Apply(doc); err != nil {
		return nil, fmt.Errorf("the webhook's patch does not apply: %w", err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	return out, nil
}

func withOp(r Request, op Op) Request {
	r.op = op
	return r
}

// HTTPWebhooks implements Webhooks from ResourceInterpreterWebhookConfigurations: it calls each
// webhook's URL (or its Service, through the given resolver) over HTTPS with its CA bundle,
// timeout (timeoutSeconds, default 10 s, at most 30 s) and rules.
type HTTPWebhooks struct {
	hooks []*httpHook // in configuration name order, then webhook order
}

// ServiceURL resolves a webhook's service reference to a URL; the default is the in-cluster
// DNS name https://NAME.NAMESPACE.svc:PORT/PATH.
type ServiceURL func(ref configv1alpha1.ResourceInterpreterWebhook) (string, error)

// NewHTTPWebhooks builds the webhook step from the configurations. A webhook that cannot be set
// up (a bad CA bundle, no URL) is returned in errs and left out.
func NewHTTPWebhooks(configs []configv1alpha1.ResourceInterpreterWebhookConfiguration, resolve ServiceURL) (*HTTPWebhooks, []error) {
	sort.Slice(configs, func(i, j int) bool { return configs[i].Name < configs[j].Name })
	var errs []error
	w := &HTTPWebhooks{}
	for _, c := range configs {
		for _, h := range c.Webhooks {
			hook, err := newHTTPHook(h, resolve)
			if err != nil {
				errs = append(errs, fmt.Errorf("ResourceInterpreterWebhookConfiguration %s, webhook %s: %w", c.Name, h.Name, err))
				continue
			}
			w.hooks = append(w.hooks, hook)
		}
	}
	return w, errs
}

// Lookup returns the first webhook whose rules take op for gvk.
func (w *HTTPWebhooks) Lookup(gvk schema.GroupVersionKind, op Op) Hook {
	for _, h := range w.hooks {
		if h.matches(gvk, op) {
			return h
		}
	}
	return nil
}

type httpHook struct {
	name    string
	url     string
	rules   []configv1alpha1.RuleWithOperations
	timeout time.Duration
	client  *http.Client
}

var transports sync.Map // CA bundle → *http.Transport, shared between rebuilds

func newHTTPHook(h configv1alpha1.ResourceInterpreterWebhook, resolve ServiceURL) (*httpHook, error) {
	var target string
	switch {
	case h.ClientConfig.URL != nil:
		target = *h.ClientConfig.URL
	case h.ClientConfig.Service != nil:
		if resolve != nil {
			u, err := resolve(h)
			if err != nil {
				return nil, err
			}
			target = u
		} else {
			s := h.ClientConfig.Service
			port := int32(443)
			if s.Port != nil {
				port = *s.Port
			}
			path := ""
			if s.Path != nil {
				path = *s.Path
			}
			target = fmt.Sprintf("https://%s.%s.svc:%d%s", s.Name, s.Namespace, port, path)
		}
	default:
		return nil, fmt.Errorf("clientConfig has neither url nor service")
	}
	if u, err := url.Parse(target); err != nil || u.Scheme != "https" {
		return nil, fmt.Errorf("the webhook URL %q is not an https URL", target)
	}
	key := string(h.ClientConfig.CABundle)
	tr, ok := transports.Load(key)
	if !ok {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if len(h.ClientConfig.CABundle) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(h.ClientConfig.CABundle) {
				return nil, fmt.Errorf("clientConfig.caBundle holds no PEM certificate")
			}
			cfg.RootCAs = pool
		}
		tr, _ = transports.LoadOrStore(key, &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second})
	}
	timeout := 10 * time.Second
	if h.TimeoutSeconds != nil && *h.TimeoutSeconds > 0 {
		timeout = min(time.Duration(*h.TimeoutSeconds)*time.Second, 30*time.Second)
	}
	if len(h.InterpreterContextVersions) > 0 && !slices.Contains(h.InterpreterContextVersions, "v1alpha1") {
		return nil, fmt.Errorf("interpreterContextVersions %v does not include v1alpha1", h.InterpreterContextVersions)
	}
	return &httpHook{name: h.Name, url: target, rules: h.Rules, timeout: timeout, client: &http.Client{Transport: tr.(*http.Transport)}}, nil
}

func (h *httpHook) Name() string { return h.name }

func matchOne(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

func (h *httpHook) matches(gvk schema.GroupVersionKind, op Op) bool {
	for _, r := range h.rules {
		opOK := false
		for _, o := range r.Operations {
			if o == configv1alpha1.InterpreterOperationAll || o == op {
				opOK = true
			}
		}
		if opOK && matchOne(r.APIGroups, gvk.Group) && matchOne(r.APIVersions, gvk.Version) && matchOne(r.Kinds, gvk.Kind) {
			return true
		}
	}
	return false
}

// Interpret sends one ResourceInterpreterContext and checks the answer: the same uid, and
// successful, or its status message as the error.
func (h *httpHook) Interpret(ctx context.Context, r Request) (*Response, error) {
	obj := r.Object
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	gvk := obj.GroupVersionKind()
	req := &ResourceInterpreterRequest{
		UID: uuid.NewUUID(), Kind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name: obj.GetName(), Namespace: obj.GetNamespace(), Operation: r.op,
		Object: runtime.RawExtension{Raw: raw}, DesiredReplicas: r.DesiredReplicas, AggregatedStatus: r.AggregatedStatus,
	}
	if r.ObservedObject != nil {
		b, err := json.Marshal(r.ObservedObject.Object)
		if err != nil {
			return nil, err
		}
		req.ObservedObject = &runtime.RawExtension{Raw: b}
	}
	body, err := json.Marshal(&ResourceInterpreterContext{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: "ResourceInterpreterContext"},
		Request:  req,
	})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", h.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", h.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered HTTP %d: %s", h.url, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var answer ResourceInterpreterContext
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, fmt.Errorf("the answer of %s is not a ResourceInterpreterContext: %w", h.url, err)
	}
	if answer.Response == nil {
		return nil, fmt.Errorf("the answer of %s has no response", h.url)
	}
	if answer.Response.UID != req.UID {
		return nil, fmt.Errorf("the answer of %s is for uid %q, not %q", h.url, answer.Response.UID, req.UID)
	}
	if !answer.Response.Successful {
		msg := "unsuccessful"
		if answer.Response.Status != nil && answer.Response.Status.Message != "" {
			msg = answer.Response.Status.Message
		}
		return nil, fmt.Errorf("%s: %s", h.name, msg)
	}
	return answer.Response, nil
}
