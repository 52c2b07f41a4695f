package rollout

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Work annotations the binding controller keeps on the Works of a binding
// under a staged rollout. They live on the Work only, never on the member
// object.
const (
	// StrategyWorkAnnotation marks a Work whose binding has a strategy, so
	// that only those Works' status reports wake the rollout controller.
	StrategyWorkAnnotation = "rollout.flotilla.io/strategy"
	// PendingAnnotation is the Digest of the newer rendering the Work is
	// held back from.
	PendingAnnotation = "rollout.flotilla.io/pending"
	// PreviousAnnotation is the manifest the cluster ran before the
	// rollout reached it (EncodeManifest), where `flotilla rollout abort`
	// returns it.
	PreviousAnnotation = "rollout.flotilla.io/previous"
	// RevisionAnnotation is the Revision of the render pass that wrote the
	// Work. The rollout controller plans only when every target Work
	// carries the same one: a view caught halfway through the binding
	// controller's writes could otherwise take a cluster not yet held for
	// one that is done.
	RevisionAnnotation = "rollout.flotilla.io/revision"
)

// Revision identifies a change across a binding's clusters: a hex digest
// of the distinct Digests of their renderings, so that a cluster joining
// or leaving with a rendering the others have is not a new change.
func Revision(digests []string) string {
	ds := slices.Clone(digests)
	slices.Sort(ds)
	ds = slices.Compact(ds)
	sum := sha256.Sum256([]byte(strings.Join(ds, ",")))
	return hex.EncodeToString(sum[:6])
}

// MaxPrevious is the largest encoded previous manifest kept, in bytes
// (annotations share 256 KiB per object); a larger one is not kept and
// that cluster cannot be rolled back.
const MaxPrevious = 128 << 10

// generationAnnotation is Karmada's resourcetemplate.karmada.io/generation,
// which every rendering carries and every template change bumps.
const generationAnnotation = "resourcetemplate.karmada.io/generation"

// Digest identifies a rendering for staging: a hex SHA-256 of the manifest
// without spec.replicas and the template-generation annotation, so that
// scaling (kubectl scale, FederatedHPA, a new Divided share) is never held
// while any other change is. An error means the manifest does not encode
// as JSON.
func Digest(manifest map[string]any) (string, error) {
	m := maps.Clone(manifest)
	if spec, ok := m["spec"].(map[string]any); ok {
		spec = maps.Clone(spec)
		delete(spec, "replicas")
		m["spec"] = spec
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		if ann, ok := md["annotations"].(map[string]any); ok {
			ann = maps.Clone(ann)
			delete(ann, generationAnnotation)
			md["annotations"] = ann
		}
		m["metadata"] = md
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("digest of the rendering: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12]), nil
}

// Action is what the binding controller does with one cluster's new
// rendering.
type Action int

const (
	// Write the new rendering (no rollout, nothing to stage, or admitted).
	Write Action = iota
	// Hold keeps the manifest the Work has (with the new replicas) and
	// records the new rendering as pending.
	Hold
	// Revert writes the previous manifest back (the rollout was aborted)
	// and records the new rendering as pending.
	Revert
)

// GateInput is what Gate reads for one cluster.
type GateInput struct {
	// Staged says the binding has a strategy.
	Staged bool
	// HasWork says the cluster's Work exists; Current is the Digest of its
	// manifest.
	HasWork bool
	Current string
	// New is the Digest of the new rendering.
	New string
	// Admitted is the rendering the rollout admitted the cluster to
	// (status.rollout.clusters[].rendering); empty if none.
	Admitted string
	// Aborted says the user aborted the rollout; Previous is the Digest of
	// the Work's previous manifest, empty if it has none.
	Aborted  bool
	Previous string
}

// Gate decides for one cluster. A first placement (no Work) and an
// unchanged rendering are written; a changed one waits for its admission,
// so a stale admission never lets a newer change through.
func Gate(in GateInput) Action {
	switch {
	case !in.Staged || !in.HasWork:
		return Write
	case in.Aborted && in.Previous != "" && in.Current != in.Previous && in.Admitted == "":
		return Revert
	case in.Current == in.New || in.Admitted == in.New:
		return Write
	}
	return Hold
}

// EncodeManifest packs a manifest for PreviousAnnotation: gzip, then
// base64.
func EncodeManifest(raw []byte) (string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeManifest unpacks what EncodeManifest packed; an error means the
// annotation was damaged.
func DecodeManifest(s string) ([]byte, error) {
	gz, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", PreviousAnnotation, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", PreviousAnnotation, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 4*MaxPrevious*8))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", PreviousAnnotation, err)
	}
	return raw, nil
}
