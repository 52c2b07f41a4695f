package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/promotion"
)

// actionRequest is the body of POST /actions. Confirm false runs the
// action as a server-side dry run and answers with the object it would
// write; true writes it.
type actionRequest struct {
	// Action is cordon, uncordon, taint, untaint, rebalance, pause, resume
	// or promote.
	Action  string `json:"action"`
	Confirm bool   `json:"confirm"`
	// Cluster, with Key, Value and Effect for taint and untaint.
	Cluster string `json:"cluster,omitempty"`
	Key     string `json:"key,omitempty"`
	Value   string `json:"value,omitempty"`
	Effect  string `json:"effect,omitempty"`
	// APIVersion, Kind, Namespace and Name name the workload to rebalance;
	// Kind (as kubectl takes it: deploy, deployments.apps, Deployment),
	// Namespace and Name the object in Cluster to promote.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Binding is the binding of a staged rollout to pause or resume:
	// "namespace/name" of a ResourceBinding, or a ClusterResourceBinding's name.
	Binding     string `json:"binding,omitempty"`
	BindingKind string `json:"bindingKind,omitempty"`
}

// actionResponse says what the action writes (YAML of the object, after
// the server's dry run or write), or why it cannot.
type actionResponse struct {
	Summary string `json:"summary"`
	Object  string `json:"object,omitempty"`
	Error   string `json:"error,omitempty"`
	Done    bool   `json:"done,omitempty"`
}

func (s *Server) serveAction(w http.ResponseWriter, r *http.Request, u *user) {
	var req actionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, actionResponse{Error: "the action's request is not valid JSON: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	resp, err := s.act(ctx, u, req)
	switch {
	case apierrors.IsForbidden(err):
		resp.Error = fmt.Sprintf("Refused: RBAC does not let %s do this. The control plane said: %s", u.Name, apierrors.ReasonForError(err))
		if st, ok := err.(apierrors.APIStatus); ok {
			resp.Error = fmt.Sprintf("Refused: RBAC does not let %s do this. The control plane said: %s", u.Name, st.Status().Message)
		}
		writeJSON(w, http.StatusForbidden, resp)
	case apierrors.IsNotFound(err):
		resp.Error = "Not found: " + err.Error() + " (deleted since the page was drawn?)"
		writeJSON(w, http.StatusNotFound, resp)
	case errors.As(err, new(badAction)):
		resp.Error = err.Error()
		writeJSON(w, http.StatusBadRequest, resp)
	case err != nil:
		resp.Error = err.Error()
		writeJSON(w, http.StatusUnprocessableEntity, resp)
	default:
		resp.Done = req.Confirm
		writeJSON(w, http.StatusOK, resp)
	}
}

// badAction is a request the dashboard refuses before asking the control plane.
type badAction string

func (b badAction) Error() string { return string(b) }

func (s *Server) act(ctx context.Context, u *user, req actionRequest) (actionResponse, error) {
	dry := !req.Confirm
	switch req.Action {
	case "cordon", "uncordon", "taint", "untaint":
		return s.taint(ctx, u, req, dry)
	case "rebalance":
		if req.APIVersion == "" || req.Kind == "" || req.Name == "" {
			return actionResponse{}, badAction("rebalance needs the workload's apiVersion, kind and name")
		}
		wr := &appsv1alpha1.WorkloadRebalancer{
			TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.SchemeGroupVersion.String(), Kind: "WorkloadRebalancer"},
			ObjectMeta: metav1.ObjectMeta{GenerateName: "dashboard-"},
			Spec: appsv1alpha1.WorkloadRebalancerSpec{Workloads: []appsv1alpha1.ObjectReference{{
				APIVersion: req.APIVersion, Kind: req.Kind, Namespace: req.Namespace, Name: req.Name}}},
		}
		var opts []client.CreateOption
		if dry {
			opts = append(opts, client.DryRunAll)
		}
		if err := u.cl.Create(ctx, wr, opts...); err != nil {
			return actionResponse{Summary: "create a WorkloadRebalancer"}, err
		}
		summary := fmt.Sprintf("create a WorkloadRebalancer (named dashboard-… when written): reschedule %s %s from scratch", req.Kind, qualified(req.Namespace, req.Name))
		if !dry {
			summary = fmt.Sprintf("created WorkloadRebalancer %s: %s %s is rescheduled from scratch", wr.Name, req.Kind, qualified(req.Namespace, req.Name))
		}
		return actionResponse{Summary: summary,
			Object: s.objectYAML(wr)}, nil
	case "pause", "resume":
		return s.pauseResume(ctx, u, req, dry)
	case "promote":
		return s.promote(ctx, u, req, dry)
	}
	return actionResponse{}, badAction(fmt.Sprintf("unknown action %q: want cordon, uncordon, taint, untaint, rebalance, pause, resume or promote", req.Action))
}

func (s *Server) taint(ctx context.Context, u *user, req actionRequest, dry bool) (actionResponse, error) {
	if req.Cluster == "" {
		return actionResponse{}, badAction(req.Action + " needs a cluster")
	}
	t := corev1.Taint{Key: req.Key, Value: req.Value, Effect: corev1.TaintEffect(req.Effect)}
	switch req.Action {
	case "cordon", "uncordon":
		t = corev1.Taint{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	case "taint":
		if t.Key == "" || !slices.Contains([]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}, t.Effect) {
			return actionResponse{}, badAction("a taint needs a key and an effect: NoSchedule, PreferNoSchedule or NoExecute")
		}
	}
	add := req.Action == "cordon" || req.Action == "taint"
	summary := fmt.Sprintf("%s cluster %s", req.Action, req.Cluster)
	if req.Action == "taint" || req.Action == "untaint" {
		summary = fmt.Sprintf("%s cluster %s with %s", req.Action, req.Cluster, taintText(t))
	}
	c := &clusterv1alpha1.Cluster{}
	err := s.update(ctx, u, client.ObjectKey{Name: req.Cluster}, c, dry, func() error {
		var taints []corev1.Taint
		found := false
		for _, have := range c.Spec.Taints {
			if have.Key == t.Key && (t.Effect == "" || have.Effect == t.Effect) {
				found = true
				if !add {
					continue
				}
				have.Value = t.Value
			}
			taints = append(taints, have)
		}
		if add && !found {
			now := metav1.Now()
			t.TimeAdded = &now
			taints = append(taints, t)
		}
		c.Spec.Taints = taints
		return nil
	})
	if err != nil {
		return actionResponse{Summary: summary}, err
	}
	return actionResponse{Summary: summary, Object: s.objectYAML(c)}, nil
}

// update reads key into obj as u, lets change edit it (or refuse, with
// its error), and writes it back as u (a server-side dry run with dry),
// again from a fresh read on a conflict.
func (s *Server) update(ctx context.Context, u *user, key client.ObjectKey, obj client.Object, dry bool, change func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := u.cl.Get(ctx, key, obj); err != nil {
			return err
		}
		if err := change(); err != nil {
			return err
		}
		var opts []client.UpdateOption
		if dry {
			opts = append(opts, client.DryRunAll)
		}
		return u.cl.Update(ctx, obj, opts...)
	})
}

func taintText(t corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

func (s *Server) pauseResume(ctx context.Context, u *user, req actionRequest, dry bool) (actionResponse, error) {
	if req.Binding == "" {
		return actionResponse{}, badAction(req.Action + " needs the rollout's binding")
	}
	ns, name := "", req.Binding
	if req.BindingKind != "ClusterResourceBinding" {
		var ok bool
		if ns, name, ok = cutLast(req.Binding); !ok {
			return actionResponse{}, badAction("a ResourceBinding is named namespace/name")
		}
	}
	kind := bindingKind(ns)
	summary := fmt.Sprintf("%s the staged rollout of %s %s", req.Action, kind, req.Binding)
	b := kind.Empty()
	err := s.update(ctx, u, client.ObjectKey{Namespace: ns, Name: name}, b, dry, func() error {
		a := b.GetAnnotations()
		if a[rolloutv1alpha1.StrategyAnnotation] == "" {
			return badAction(fmt.Sprintf("%s has no staged rollout (its policy names no %s)", req.Binding, rolloutv1alpha1.StrategyAnnotation))
		}
		if req.Action == "pause" {
			a[rolloutv1alpha1.PausedAnnotation] = "true"
		} else {
			delete(a, rolloutv1alpha1.PausedAnnotation)
			a[rolloutv1alpha1.ResumeAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
		}
		b.SetAnnotations(a)
		return nil
	})
	if err != nil {
		return actionResponse{Summary: summary}, err
	}
	return actionResponse{Summary: summary, Object: s.objectYAML(b)}, nil
}

func cutLast(s string) (string, string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return s[:i], s[i+1:], i > 0 && i < len(s)-1
		}
	}
	return "", s, false
}

// objectYAML is obj as YAML without managedFields and status: what an
// action writes.
func (s *Server) objectYAML(obj client.Object) string {
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetManagedFields(nil)
	if gvk, err := apiutil.GVKForObject(obj, s.scheme); err == nil {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	delete(m, "status")
	out, err := yaml.Marshal(m)
	if err != nil {
		return ""
	}
	return string(out)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// promote takes an object running in a member into the control plane, as
// `flotilla promote` (karmadactl promote) does: read from the member
// through the Cluster proxy as the user, created on the control plane
// without what the member set, with a policy that places it on that member
// and adopts the running copy (conflictResolution Overwrite). The policy
// is written first, so the template is claimed by it as it is created.
func (s *Server) promote(ctx context.Context, u *user, req actionRequest, dry bool) (actionResponse, error) {
	if req.Cluster == "" || req.Kind == "" || req.Name == "" {
		return actionResponse{}, badAction("promote needs a cluster, a kind and a name")
	}
	m, err := s.resolveKind(req.Kind)
	if err != nil {
		return actionResponse{}, badAction(err.Error())
	}
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if ns = req.Namespace; ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	what := fmt.Sprintf("%s %s", m.GroupVersionKind.Kind, qualified(ns, req.Name))
	summary := fmt.Sprintf("promote %s from cluster %s", what, req.Cluster)
	proxied := rest.CopyConfig(u.cfg)
	proxied.Host = strings.TrimSuffix(proxied.Host, "/") + "/apis/cluster.karmada.io/v1alpha1/clusters/" + req.Cluster + "/proxy"
	member, err := dynamic.NewForConfig(proxied)
	if err != nil {
		return actionResponse{Summary: summary}, err
	}
	obj, err := member.Resource(m.Resource).Namespace(ns).Get(ctx, req.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return actionResponse{Summary: summary}, badAction(fmt.Sprintf("%s not found in cluster %s: check the kind, the name and the namespace", what, req.Cluster))
	case err != nil:
		return actionResponse{Summary: summary}, fmt.Errorf("read %s from cluster %s through its proxy: %w", what, req.Cluster, err)
	}
	if _, err := u.dyn.Resource(m.Resource).Namespace(ns).Get(ctx, req.Name, metav1.GetOptions{}); err == nil {
		return actionResponse{Summary: summary}, badAction(fmt.Sprintf("%s already exists on the control plane, so it is already a template: give it a policy instead", what))
	}
	target := promotion.Target{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: ns, Name: obj.GetName()}
	name := promotion.PolicyName(ns, obj.GetName(), obj.GroupVersionKind())
	var policy client.Object = promotion.ClusterPropagationPolicy(name, req.Cluster, target)
	if ns != "" {
		policy = promotion.PropagationPolicy(name, req.Cluster, target)
	}
	var opts []client.CreateOption
	createOpts := metav1.CreateOptions{}
	if dry {
		opts, createOpts.DryRun = append(opts, client.DryRunAll), []string{metav1.DryRunAll}
	}
	if err := u.cl.Create(ctx, policy, opts...); err != nil {
		return actionResponse{Summary: summary}, err
	}
	tmpl, err := u.dyn.Resource(m.Resource).Namespace(ns).Create(ctx, promotion.Template(obj), createOpts)
	if err != nil {
		return actionResponse{Summary: summary}, fmt.Errorf("the policy %s was written, the template not: %w", name, err)
	}
	return actionResponse{Summary: summary, Object: s.objectYAML(policy) + "---\n" + s.objectYAML(tmpl)}, nil
}

// resolveKind maps a kind as kubectl takes it (deploy, deployments,
// deployments.apps, Deployment) to its REST mapping on the control plane.
func (s *Server) resolveKind(arg string) (*meta.RESTMapping, error) {
	gvr, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var res schema.GroupVersionResource
	var err error
	if gvr != nil {
		res, err = s.shortcuts.ResourceFor(*gvr)
	}
	if gvr == nil || err != nil {
		res, err = s.shortcuts.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		return nil, fmt.Errorf("the control plane serves no kind %q", arg)
	}
	gvk, err := s.shortcuts.KindFor(res)
	if err != nil {
		return nil, err
	}
	return s.shortcuts.RESTMapping(gvk.GroupKind(), gvk.Version)
}
