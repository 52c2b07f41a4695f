package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

const digest = "sha256:50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c"

func TestParseImage(t *testing.T) {
	tests := []struct {
		image string
		want  imageRef
	}{
		{image: "pause", want: imageRef{repository: "pause"}},
		{image: "team/app:v1", want: imageRef{repository: "team/app", tag: "v1"}},
		{image: "registry.k8s.io/pause:3.9", want: imageRef{registry: "registry.k8s.io", repository: "pause", tag: "3.9"}},
		{image: "registry.example:10443/team/app", want: imageRef{registry: "registry.example:10443", repository: "team/app"}},
		{image: "localhost/app:dev", want: imageRef{registry: "localhost", repository: "app", tag: "dev"}},
		{image: "10.0.0.1:5000/app:1.0", want: imageRef{registry: "10.0.0.1:5000", repository: "app", tag: "1.0"}},
		{image: "app@" + digest, want: imageRef{repository: "app", digest: digest}},
		{image: "registry.example:10443/team/app:v1@" + digest,
			want: imageRef{registry: "registry.example:10443", repository: "team/app", tag: "v1", digest: digest}},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got, err := parseImage(tt.image)
			if err != nil {
				t.Fatalf("parseImage() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(imageRef{})); diff != "" {
				t.Errorf("parseImage() (-want +got):\n%s", diff)
			}
			if got.String() != tt.image {
				t.Errorf("String() = %q, want the input back", got.String())
			}
		})
	}
	for _, bad := range []string{"", "app:", "registry.example/", "app@sha256", "app@not a digest"} {
		if _, err := parseImage(bad); err == nil {
			t.Errorf("parseImage(%q) succeeded", bad)
		}
	}
}

func TestOverrideImage(t *testing.T) {
	const (
		add     = policyv1alpha1.OverriderOpAdd
		remove  = policyv1alpha1.OverriderOpRemove
		replace = policyv1alpha1.OverriderOpReplace
	)
	tests := []struct {
		name      string
		image     string
		component policyv1alpha1.ImageComponent
		operator  policyv1alpha1.OverriderOperator
		value     string
		want      string
	}{
		// Karmada's documented examples.
		{name: "add a registry where there is none", image: "myapp:1.0.0", component: policyv1alpha1.Registry, operator: add, value: "test-repo", want: "test-repo/myapp:1.0.0"},
		{name: "replace the repository", image: "myapp:1.0.0", component: policyv1alpha1.Repository, operator: replace, value: "myapp2", want: "myapp2:1.0.0"},
		{name: "remove the tag", image: "myapp:1.0.0", component: policyv1alpha1.Tag, operator: remove, want: "myapp"},

		{name: "add appends to an existing registry", image: "registry.example/app:v1", component: policyv1alpha1.Registry, operator: add, value: ".cn", want: "registry.example.cn/app:v1"},
		{name: "replace a registry with a port", image: "registry.example:10443/team/app:v1", component: policyv1alpha1.Registry, operator: replace, value: "mirror.example:5000", want: "mirror.example:5000/team/app:v1"},
		{name: "remove a registry with a port", image: "registry.example:10443/team/app:v1", component: policyv1alpha1.Registry, operator: remove, want: "team/app:v1"},
		{name: "replace the registry keeps tag and digest", image: "registry.example/team/app:v1@" + digest, component: policyv1alpha1.Registry, operator: replace, value: "mirror.example", want: "mirror.example/team/app:v1@" + digest},
		{name: "add appends to the repository", image: "registry.example/nginx:1", component: policyv1alpha1.Repository, operator: add, value: "/slim", want: "registry.example/nginx/slim:1"},
		{name: "replace the repository keeps the digest", image: "app@" + digest, component: policyv1alpha1.Repository, operator: replace, value: "other/app", want: "other/app@" + digest},
		{name: "replace the tag of an untagged image", image: "registry.example:10443/app", component: policyv1alpha1.Tag, operator: replace, value: "v2", want: "registry.example:10443/app:v2"},
		{name: "replace the tag drops the digest", image: "app:v1@" + digest, component: policyv1alpha1.Tag, operator: replace, value: "v2", want: "app:v2"},
		{name: "replace with a digest drops the tag", image: "app:v1", component: policyv1alpha1.Tag, operator: replace, value: digest, want: "app@" + digest},
		{name: "remove drops tag and digest", image: "app:v1@" + digest, component: policyv1alpha1.Tag, operator: remove, want: "app"},
		{name: "remove on an untagged image is a no-op", image: "localhost:5000/app", component: policyv1alpha1.Tag, operator: remove, want: "localhost:5000/app"},
		{name: "add sets the tag of an untagged image", image: "localhost:5000/app", component: policyv1alpha1.Tag, operator: add, value: "v1", want: "localhost:5000/app:v1"},
		{name: "add sets the digest of an unversioned image", image: "app", component: policyv1alpha1.Tag, operator: add, value: digest, want: "app@" + digest},
		{name: "add appends to an existing tag", image: "app:v1", component: policyv1alpha1.Tag, operator: add, value: "-debug", want: "app:v1-debug"},
		{name: "add of a digest to a tagged image keeps one version", image: "app:v1", component: policyv1alpha1.Tag, operator: add, value: digest, want: "app:v1"},
		{name: "add to a pinned image keeps the digest", image: "app@" + digest, component: policyv1alpha1.Tag, operator: add, value: "v1", want: "app@" + digest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := overrideImage(tt.image, &policyv1alpha1.ImageOverrider{Component: tt.component, Operator: tt.operator, Value: tt.value})
			if err != nil {
				t.Fatalf("overrideImage() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("overrideImage() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOverrideImageRefuses(t *testing.T) {
	tests := []struct {
		name string
		o    policyv1alpha1.ImageOverrider
	}{
		{name: "removing the repository", o: policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Repository, Operator: policyv1alpha1.OverriderOpRemove}},
		{name: "add without a value", o: policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd}},
		{name: "replace without a value", o: policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace}},
		{name: "an unknown component", o: policyv1alpha1.ImageOverrider{Component: "Digest", Operator: policyv1alpha1.OverriderOpRemove}},
		{name: "an unknown operator", o: policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: "merge", Value: "v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := overrideImage("registry.example/app:v1", &tt.o); err == nil {
				t.Errorf("overrideImage() = %q, want an error", got)
			}
		})
	}
}

// podTemplate builds a workload whose pod spec sits at specPath, with containers and init
// containers given as name -> image.
func podTemplate(apiVersion, kind string, specPath []string, containers, initContainers []string) *unstructured.Unstructured {
	list := func(images []string, prefix string) []any {
		var out []any
		for i, image := range images {
			out = append(out, map[string]any{"name": prefix + string(rune('0'+i)), "image": image})
		}
		return out
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "w", "namespace": "default"}}}
	spec := map[string]any{"containers": list(containers, "c")}
	if initContainers != nil {
		spec["initContainers"] = list(initContainers, "i")
	}
	if err := unstructured.SetNestedField(u.Object, spec, specPath...); err != nil {
		panic(err)
	}
	return u
}

func imagesAt(t *testing.T, u *unstructured.Unstructured, path ...string) []string {
	t.Helper()
	list, _, err := unstructured.NestedSlice(u.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		out = append(out, c.(map[string]any)["image"].(string))
	}
	return out
}

func TestImageOverriderDefaultsToEveryContainer(t *testing.T) {
	template := []string{"spec", "template", "spec"}
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		specPath []string
		want     []string
	}{
		{name: "Pod", obj: podTemplate("v1", "Pod", []string{"spec"}, []string{"nginx:1", "busybox"}, nil), specPath: []string{"spec"},
			want: []string{"mirror.example/nginx:1", "mirror.example/busybox"}},
		{name: "Deployment", obj: podTemplate("apps/v1", "Deployment", template, []string{"nginx:1"}, nil), specPath: template, want: []string{"mirror.example/nginx:1"}},
		{name: "StatefulSet", obj: podTemplate("apps/v1", "StatefulSet", template, []string{"nginx:1"}, nil), specPath: template, want: []string{"mirror.example/nginx:1"}},
		{name: "DaemonSet", obj: podTemplate("apps/v1", "DaemonSet", template, []string{"nginx:1"}, nil), specPath: template, want: []string{"mirror.example/nginx:1"}},
		{name: "ReplicaSet", obj: podTemplate("apps/v1", "ReplicaSet", template, []string{"nginx:1"}, nil), specPath: template, want: []string{"mirror.example/nginx:1"}},
		{name: "Job", obj: podTemplate("batch/v1", "Job", template, []string{"perl:5.34.0"}, nil), specPath: template, want: []string{"mirror.example/perl:5.34.0"}},
		{name: "CronJob", obj: podTemplate("batch/v1", "CronJob", []string{"spec", "jobTemplate", "spec", "template", "spec"}, []string{"perl"}, nil),
			specPath: []string{"spec", "jobTemplate", "spec", "template", "spec"}, want: []string{"mirror.example/perl"}},
		{name: "a look-alike kind of another group is left alone", obj: podTemplate("example.io/v1", "Deployment", template, []string{"nginx:1"}, nil),
			specPath: template, want: []string{"nginx:1"}},
	}
	o := policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.example"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := applyImageOverrider(tt.obj, &o); err != nil {
				t.Fatalf("applyImageOverrider() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, imagesAt(t, tt.obj, append(tt.specPath, "containers")...)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImageOverriderPredicate(t *testing.T) {
	template := []string{"spec", "template", "spec"}
	o := policyv1alpha1.ImageOverrider{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"}

	t.Run("init containers change only through a predicate", func(t *testing.T) {
		obj := podTemplate("apps/v1", "Deployment", template, []string{"app:v1"}, []string{"init:v1"})
		if _, err := applyImageOverrider(obj, &o); err != nil {
			t.Fatal(err)
		}
		if got := imagesAt(t, obj, "spec", "template", "spec", "initContainers"); got[0] != "init:v1" {
			t.Errorf("init container image = %q, want it untouched without a predicate", got[0])
		}
		withPredicate := o
		withPredicate.Predicate = &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/initContainers/0/image"}
		if _, err := applyImageOverrider(obj, &withPredicate); err != nil {
			t.Fatal(err)
		}
		if got := imagesAt(t, obj, "spec", "template", "spec", "initContainers"); got[0] != "init:v2" {
			t.Errorf("init container image = %q, want init:v2", got[0])
		}
	})

	t.Run("a predicate selects one container of any kind", func(t *testing.T) {
		obj := podTemplate("example.io/v1", "Workload", []string{"spec", "pod"}, []string{"a:v1", "b:v1"}, nil)
		withPredicate := o
		withPredicate.Predicate = &policyv1alpha1.ImagePredicate{Path: "/spec/pod/containers/1/image"}
		if _, err := applyImageOverrider(obj, &withPredicate); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a:v1", "b:v2"}, imagesAt(t, obj, "spec", "pod", "containers")); diff != "" {
			t.Errorf("images (-want +got):\n%s", diff)
		}
	})

	t.Run("a predicate path that does not resolve is an error naming it", func(t *testing.T) {
		obj := podTemplate("apps/v1", "Deployment", template, []string{"app:v1"}, nil)
		withPredicate := o
		withPredicate.Predicate = &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/3/image"}
		path, err := applyImageOverrider(obj, &withPredicate)
		if err == nil || path != withPredicate.Predicate.Path {
			t.Errorf("applyImageOverrider() = %q, %v; want an error at the predicate path", path, err)
		}
	})

	t.Run("an unparsable image names its container", func(t *testing.T) {
		obj := podTemplate("apps/v1", "Deployment", template, []string{"app:v1", "bad:"}, nil)
		path, err := applyImageOverrider(obj, &o)
		if err == nil || path != "/spec/template/spec/containers/1/image" {
			t.Errorf("applyImageOverrider() = %q, %v; want an error at container 1", path, err)
		}
	})
}
