package component

import (
	"context"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	openapicommon "k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestSplitOn(t *testing.T) {
	got := splitOn([]string{"--health-port=1", "--", "member1", "--secure-port=2", "--", "member2"}, "--")
	want := [][]string{{"--health-port=1"}, {"member1", "--secure-port=2"}, {"member2"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("splitOn = %q, want %q", got, want)
	}
}

// TestPausableListener: paused, a member answers nothing (a client times
// out, as with a stopped process); resumed, it answers again.
func TestPausableListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := newPausableListener(ln)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(pl) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 500 * time.Millisecond}
	get := func() error {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("before the pause: %v", err)
	}
	pl.Pause()
	if err := get(); err == nil {
		t.Fatal("paused, the member still answered")
	}
	pl.Resume()
	if err := get(); err != nil {
		t.Fatalf("resumed: %v", err)
	}
}

// TestSharedDefinitions: the definitions are built once per key; every
// caller gets its own map and its own top-level extensions (which the
// OpenAPI builders write to), over the same schemas.
func TestSharedDefinitions(t *testing.T) {
	builds := 0
	build := func() map[string]openapicommon.OpenAPIDefinition {
		builds++
		def := openapicommon.OpenAPIDefinition{}
		def.Schema.Description = "a pod"
		def.Schema.Extensions = spec.Extensions{"x-kubernetes-group-version-kind": "v1/Pod"}
		return map[string]openapicommon.OpenAPIDefinition{"k8s.io/api/core/v1.Pod": def}
	}
	a := shared(t.Name(), build)
	b := shared(t.Name(), build)
	if builds != 1 {
		t.Fatalf("built %d times, want once", builds)
	}
	delete(a["k8s.io/api/core/v1.Pod"].Schema.Extensions, "x-kubernetes-group-version-kind")
	a["other"] = openapicommon.OpenAPIDefinition{}
	pod := b["k8s.io/api/core/v1.Pod"]
	if pod.Schema.Description != "a pod" || pod.Schema.Extensions["x-kubernetes-group-version-kind"] != "v1/Pod" {
		t.Errorf("one caller's writes reached another's definitions: %+v", pod.Schema)
	}
	if _, ok := b["other"]; ok {
		t.Error("one caller's new definition reached another's map")
	}
	if c := shared(t.Name()+"/v2", build); builds != 2 || len(c) != 1 {
		t.Errorf("another key built %d times in all, want 2", builds)
	}
}

// TestShareDefinitionsByReferenceForm: callbacks that give the same
// reference share the definitions; a v2 and a v3 callback do not.
func TestShareDefinitionsByReferenceForm(t *testing.T) {
	var refs []string
	get := shareDefinitions(t.Name(), func(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
		r := ref(definitionsProbe)
		refs = append(refs, r.String())
		return map[string]openapicommon.OpenAPIDefinition{}
	})
	v3 := func(name string) spec.Ref { return spec.MustCreateRef("#/components/schemas/" + name) }
	v2 := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	get(v3)
	get(v3)
	get(v2)
	if len(refs) != 2 {
		t.Errorf("built for %q, want once per reference form", refs)
	}
}

// TestSharedOpenAPIV3: one member claims the build, the others wait for
// what it publishes (or for their context to end).
func TestSharedOpenAPIV3(t *testing.T) {
	d := newSharedOpenAPIV3()
	if !d.claim() || d.claim() {
		t.Fatal("claim: want true once, then false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := d.wait(ctx); err == nil {
		t.Fatal("wait before publish: want the context's error")
	}
	svc := handler3.NewOpenAPIService()
	d.publish(svc)
	got, err := d.wait(context.Background())
	if err != nil || got != svc {
		t.Errorf("wait after publish = %p, %v; want the published service", got, err)
	}
}
