package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// notJoined is the error of every command given a cluster the control plane
// has no Cluster for: the clusters missing, and the joined ones (sorted)
// or that none is.
func notJoined(missing, joined []string) error {
	quoted := make([]string, len(missing))
	for i, m := range missing {
		quoted[i] = strconv.Quote(m)
	}
	subject := "cluster " + strings.Join(quoted, "") + " is"
	if len(missing) > 1 {
		subject = "clusters " + strings.Join(quoted, ", ") + " are"
	}
	if len(joined) == 0 {
		return fmt.Errorf("%s not joined to the control plane, and no cluster is: join one first (flotilla join)", subject)
	}
	return fmt.Errorf("%s not joined to the control plane; joined clusters: %s", subject, strings.Join(slices.Sorted(slices.Values(joined)), ", "))
}
