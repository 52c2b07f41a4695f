// Package internal holds no code of its own: its test checks the layers of
// the tree below it (docs/development.md, "Layout", draws them).
package internal
