package override

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// imageRef is a container image reference split into the components an imageOverrider
// changes: [registry/]repository[:tag][@digest].
type imageRef struct {
	// registry is the host, with its port if any ("registry.k8s.io", "localhost:5000"); empty
	// when the reference names none (the runtime's default registry).
	registry string
	// repository is the path inside the registry ("nginx", "team/app").
	repository string
	// tag is the tag without its ':'; empty when absent.
	tag string
	// digest is the digest without its '@' ("sha256:..."); empty when absent.
	digest string
}

// digestPattern is the OCI digest grammar: algorithm ":" encoded.
var digestPattern = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)

// parseImage splits an image reference. The first path component is the registry when it
// contains a '.' or a ':' or is "localhost" (the Docker convention), so "team/app" has no
// registry while "registry.example:5000/team/app" has one. A ':' after the last '/' starts the
// tag, so registry ports are never taken for tags.
func parseImage(image string) (imageRef, error) {
	var ref imageRef
	name := image
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name, ref.digest = name[:at], name[at+1:]
		if !digestPattern.MatchString(ref.digest) {
			return imageRef{}, fmt.Errorf("image %q: invalid digest %q", image, ref.digest)
		}
	}
	if colon := strings.LastIndexByte(name, ':'); colon > strings.LastIndexByte(name, '/') {
		name, ref.tag = name[:colon], name[colon+1:]
		if ref.tag == "" {
			return imageRef{}, fmt.Errorf("image %q: empty tag", image)
		}
	}
	if slash := strings.IndexByte(name, '/'); slash >= 0 {
		if first := name[:slash]; strings.ContainsAny(first, ".:") || first == "localhost" {
			ref.registry, name = first, name[slash+1:]
		}
	}
	if name == "" {
		return imageRef{}, fmt.Errorf("image %q: no repository", image)
	}
	ref.repository = name
	return ref, nil
}

// String reassembles the reference.
func (r imageRef) String() string {
	var b strings.Builder
	if r.registry != "" {
		b.WriteString(r.registry)
		b.WriteByte('/')
	}
	b.WriteString(r.repository)
	if r.tag != "" {
		b.WriteByte(':')
		b.WriteString(r.tag)
	}
	if r.digest != "" {
		b.WriteByte('@')
		b.WriteString(r.digest)
	}
	return b.String()
}

// overrideImage applies one imageOverrider entry to an image reference, Karmada's way:
//   - Registry: add appends the value to the registry (".cn" turns "registry.k8s.io" into
//     "registry.k8s.io.cn"), or sets it when there is none; replace sets it; remove drops it.
//   - Repository: add appends the value to the repository ("/slim" turns "nginx" into
//     "nginx/slim"); replace sets it; remove is refused, as it would leave no image name.
//   - Tag: replace sets the tag, or the digest when the value is a digest ("sha256:..."), and
//     drops the other, since a reference keeps one version; remove drops tag and digest; add
//     sets the version when the reference has none, appends the value to an existing tag, and
//     leaves a reference that already has a digest (or gains a digest on top of a tag)
//     unchanged.
//
// add and replace need a non-empty value.
func overrideImage(image string, o *policyv1alpha1.ImageOverrider) (string, error) {
	ref, err := parseImage(image)
	if err != nil {
		return "", err
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
		if o.Value == "" {
			return "", fmt.Errorf("%s of the %s needs a value", o.Operator, o.Component)
		}
	case policyv1alpha1.OverriderOpRemove:
	default:
		return "", fmt.Errorf("unsupported operator %q (want add, remove or replace)", o.Operator)
	}
	switch o.Component {
	case policyv1alpha1.Registry:
		ref.registry = overrideComponent(ref.registry, o)
	case policyv1alpha1.Repository:
		if o.Operator == policyv1alpha1.OverriderOpRemove {
			return "", errors.New("removing the Repository would leave no image name")
		}
		ref.repository = overrideComponent(ref.repository, o)
	case policyv1alpha1.Tag:
		ref = overrideVersion(ref, o)
	default:
		return "", fmt.Errorf("unsupported component %q (want Registry, Repository or Tag)", o.Component)
	}
	return ref.String(), nil
}

func overrideComponent(current string, o *policyv1alpha1.ImageOverrider) string {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		return current + o.Value
	case policyv1alpha1.OverriderOpReplace:
		return o.Value
	default:
		return ""
	}
}

func overrideVersion(ref imageRef, o *policyv1alpha1.ImageOverrider) imageRef {
	valueIsDigest := digestPattern.MatchString(o.Value)
	switch o.Operator {
	case policyv1alpha1.OverriderOpRemove:
		ref.tag, ref.digest = "", ""
	case policyv1alpha1.OverriderOpReplace:
		ref.tag, ref.digest = "", ""
		if valueIsDigest {
			ref.digest = o.Value
		} else {
			ref.tag = o.Value
		}
	case policyv1alpha1.OverriderOpAdd:
		switch {
		case ref.tag == "" && ref.digest == "":
			return overrideVersion(ref, &policyv1alpha1.ImageOverrider{Operator: policyv1alpha1.OverriderOpReplace, Value: o.Value})
		case ref.digest == "" && !valueIsDigest:
			ref.tag += o.Value
		}
	}
	return ref
}

// applyImageOverrider applies one imageOverrider entry to obj. With a predicate it changes the
// image at predicate.path, which must hold a string. Without one it changes the image of every
// container (not init container, as in Karmada) of a known workload kind (see podSpecPointer);
// containers without an image and other kinds are left alone. It returns the pointer of the
// image it failed on.
func applyImageOverrider(obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) (string, error) {
	if o.Predicate != nil {
		path := o.Predicate.Path
		current, err := valueAt(obj.Object, path)
		if err != nil {
			return path, err
		}
		image, ok := current.(string)
		if !ok {
			return path, fmt.Errorf("field is a %s, not an image reference", typeName(current))
		}
		updated, err := overrideImage(image, o)
		if err != nil {
			return path, err
		}
		_, err = patch(obj.Object, policyv1alpha1.OverriderOpReplace, path, updated)
		return path, err
	}
	pointer, entries, ok := containers(obj)
	if !ok {
		return "", nil
	}
	for i, entry := range entries {
		c, ok := entry.(map[string]any)
		if !ok {
			continue
		}
		image, ok := c["image"].(string)
		if !ok {
			continue
		}
		updated, err := overrideImage(image, o)
		if err != nil {
			return fmt.Sprintf("%s/%d/image", pointer, i), err
		}
		c["image"] = updated
	}
	return "", nil
}
