package interpreter

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/lua"
)

// ReasonInterpreterFailed is the reason of the Warning event a customization or webhook
// configuration gets when one of its scripts or webhooks fails an operation.
const ReasonInterpreterFailed = "InterpreterFailed"

// Sync keeps an Interpreter in line with the ResourceInterpreterCustomizations and
// ResourceInterpreterWebhookConfigurations on the control plane. It is a manager Runnable that
// runs on every replica (each controller manager interprets for itself).
type Sync struct {
	In     *Interpreter
	Cache  crcache.Cache
	Reader client.Reader
	// Recorder, if set, gets a Warning event (ReasonInterpreterFailed) on the customization or
	// webhook configuration whose script or webhook failed.
	Recorder record.EventRecorder
	// OnChange, if set, is told of the kinds whose customizations changed, so that their
	// templates are interpreted again.
	OnChange func(gvk schema.GroupVersionKind)
}

// NeedLeaderElection is false: followers interpret too (for their caches and admission).
func (s *Sync) NeedLeaderElection() bool { return false }

// Start loads the configuration, then reloads it on every change until ctx ends.
func (s *Sync) Start(ctx context.Context) error {
	kick := make(chan struct{}, 1)
	notify := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(kick) },
		UpdateFunc: func(any, any) { poke(kick) },
		DeleteFunc: func(any) { poke(kick) },
	}
	for _, obj := range []client.Object{&configv1alpha1.ResourceInterpreterCustomization{}, &configv1alpha1.ResourceInterpreterWebhookConfiguration{}} {
		inf, err := s.Cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(notify); err != nil {
			return err
		}
	}
	if s.Recorder != nil {
		s.In.OnError = s.report
	}
	if !s.Cache.WaitForCacheSync(ctx) {
		return nil
	}
	prev := map[schema.GroupVersionKind]string{}
	for {
		prev = s.load(ctx, prev)
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		}
	}
}

func poke(kick chan struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}

// load reads both kinds, installs them, and tells OnChange of every kind whose scripts differ
// from prev. It returns the scripts now in force.
func (s *Sync) load(ctx context.Context, prev map[schema.GroupVersionKind]string) map[schema.GroupVersionKind]string {
	log := klog.FromContext(ctx)
	var rics configv1alpha1.ResourceInterpreterCustomizationList
	if err := s.Reader.List(ctx, &rics); err != nil {
		log.Error(err, "List ResourceInterpreterCustomizations")
		return prev
	}
	s.In.SetCustomizations(rics.Items)
	var hooks configv1alpha1.ResourceInterpreterWebhookConfigurationList
	if err := s.Reader.List(ctx, &hooks); err != nil {
		log.Error(err, "List ResourceInterpreterWebhookConfigurations")
	} else if len(hooks.Items) == 0 {
		s.In.SetWebhooks(nil)
	} else {
		w, errs := NewHTTPWebhooks(hooks.Items, nil)
		for _, err := range errs {
			log.Error(err, "Interpreter webhook left out")
		}
		s.In.SetWebhooks(w)
	}
	now := map[schema.GroupVersionKind]string{}
	for _, c := range rics.Items {
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		var b strings.Builder
		for op := range lua.FunctionName {
			b.WriteString(string(op) + "=" + lua.Script(&c.Spec.Customizations, op) + "\n")
		}
		now[gvk] += c.Name + "\n" + b.String()
	}
	for _, h := range hooks.Items {
		for _, w := range h.Webhooks {
			for _, r := range w.Rules {
				for _, g := range r.APIGroups {
					for _, v := range r.APIVersions {
						for _, k := range r.Kinds {
							gvk := schema.GroupVersionKind{Group: g, Version: v, Kind: k}
							now[gvk] += fmt.Sprintf("webhook %s/%s %v %s\n", h.Name, w.Name, r.Operations, h.ResourceVersion)
						}
					}
				}
			}
		}
	}
	if s.OnChange != nil {
		for gvk, v := range now {
			if prev[gvk] != v {
				s.OnChange(gvk)
			}
		}
		for gvk := range prev {
			if _, ok := now[gvk]; !ok {
				s.OnChange(gvk)
			}
		}
	}
	return now
}

// report records a failed script or webhook on its configuration object.
func (s *Sync) report(source string, op Op, obj *unstructured.Unstructured, err error) {
	kind, name, _ := strings.Cut(source, "/")
	var target client.Object
	switch kind {
	case "customization":
		target = &configv1alpha1.ResourceInterpreterCustomization{}
	case "webhook":
		// The hook's name is the webhook's; its configuration is found by listing.
		var list configv1alpha1.ResourceInterpreterWebhookConfigurationList
		if s.Reader.List(context.Background(), &list) == nil {
			for _, c := range list.Items {
				for _, w := range c.Webhooks {
					if w.Name == name {
						name = c.Name
						target = &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
					}
				}
			}
		}
	}
	if target == nil {
		klog.ErrorS(err, "Interpreter failed", "source", source, "operation", op)
		return
	}
	if s.Reader.Get(context.Background(), client.ObjectKey{Name: name}, target) != nil {
		return
	}
	s.Recorder.Event(target, corev1.EventTypeWarning, ReasonInterpreterFailed, err.Error())
}
