package verify

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/assess"
)

// storedConfig is the last read of one tracked ConfigMap or Secret: the ConfigNeed's key it
// answers (the object at a resourceVersion) and what it found.
type storedConfig struct {
	key    string
	stored assess.StoredConfig
}

// config is what was read of the data under key (an assess.ConfigNeed's Key).
func (s *clusterState) config(key string) (assess.StoredConfig, bool) {
	s.configsMu.Lock()
	defer s.configsMu.Unlock()
	for _, c := range s.configs {
		if c.key == key {
			return c.stored, true
		}
	}
	return assess.StoredConfig{}, false
}

// fetchConfig starts (for a snapshot: makes) the read of need's data; it reports whether its
// answer is in, so the decision is worth making again. Only the last read of each object is
// kept: a resourceVersion the view moved past is asked for no more.
func (s *clusterState) fetchConfig(need assess.ConfigNeed, now time.Time) bool {
	fetchKey := "config " + need.Key
	v, done, _ := s.fetches.get(fetchKey, func(ctx context.Context) (any, error) {
		return s.readConfig(ctx, need, now), nil
	})
	if !done {
		return false
	}
	s.fetches.forget(fetchKey)
	stored, _ := v.(assess.StoredConfig)
	s.configsMu.Lock()
	defer s.configsMu.Unlock()
	if s.configs == nil {
		s.configs = map[string]storedConfig{}
	}
	s.configs[need.GVR.Resource+"/"+need.Namespace+"/"+need.Name] = storedConfig{key: need.Key, stored: stored}
	return true
}

// readConfig reads the data of a ConfigMap or Secret a Flagger Canary tracks, and keeps only
// Flagger's checksum of them (assess.FlaggerChecksum): the data are neither kept nor shown;
// for a HelmRelease (need.Release), the digest of the values composed from its valuesFrom
// (readValues). The view's own lists of ConfigMaps and Secrets hold their metadata only.
func (s *clusterState) readConfig(ctx context.Context, need assess.ConfigNeed, now time.Time) assess.StoredConfig {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if need.Release != nil {
		return s.readValues(ctx, need, now)
	}
	var (
		data any
		err  error
	)
	switch need.GVR.Resource {
	case "configmaps":
		cm, e := s.core.ConfigMaps(need.Namespace).Get(ctx, need.Name, metav1.GetOptions{})
		if err = e; err == nil {
			data = cm.Data
		}
	case "secrets":
		secret, e := s.core.Secrets(need.Namespace).Get(ctx, need.Name, metav1.GetOptions{})
		if err = e; err == nil {
			data = secret.Data
		}
	default:
		return assess.StoredConfig{Unreadable: "not a ConfigMap or a Secret: " + need.GVR.Resource}
	}
	what := fmt.Sprintf("%s %s/%s", need.GVR.Resource, need.Namespace, need.Name)
	switch {
	case apierrors.IsForbidden(err):
		return assess.StoredConfig{Unreadable: fmt.Sprintf("the credentials may not get %s in namespace %s (403); grant get on them there for a precise answer",
			need.GVR.Resource, need.Namespace)}
	case err != nil:
		return assess.StoredConfig{RetryAt: now.Add(storageRetry), Unreadable: fmt.Sprintf("reading %s: %s", what, apiMessage(err))}
	}
	return assess.StoredConfig{Checksum: assess.FlaggerChecksum(data)}
}
