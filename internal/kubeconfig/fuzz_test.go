package kubeconfig

import (
	"encoding/base64"
	"strings"
	"testing"
)

// fuzzToken is the secret of the seed kubeconfig: nothing Load returns may hold it, in any form.
const fuzzToken = "fuzz-t0ken-Zq81vXr2mLk9Wd4"

const fuzzKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: "` + fuzzToken + `"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// FuzzParseClusters: the clusters list parser never panics, and what it accepts is a list of
// valid names with a known source kind.
func FuzzParseClusters(f *testing.F) {
	for _, s := range []string{"prod=env:PROD", "a=file:k.yaml#ctx\nb=context:x", "# c\n\nx=env:", "prod: env:P", "=env:A", "a=env:A\na=env:B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := parseClusters(text, "input clusters")
		if err != nil {
			return
		}
		for _, e := range entries {
			if checkName(e.name) != nil || (e.kind != sourceEnv && e.kind != sourceFile && e.kind != sourceContext) || e.ref == "" {
				t.Fatalf("parseClusters(%q) accepted %+v", text, e)
			}
		}
	})
}

// FuzzDecode: decoding never panics, and its errors never quote the text they were given.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(fuzzKubeconfig))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte(fuzzKubeconfig))))
	f.Add([]byte("token: " + fuzzToken))
	f.Add([]byte("{\"apiVersion\": 1, \"users\": \"" + fuzzToken + "\"}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _, err := decode(raw)
		if err != nil && strings.Contains(err.Error(), fuzzToken) {
			t.Fatalf("decode error quotes its input's token: %v", err)
		}
	})
}

// FuzzLoad: whatever the clusters list and the kubeconfig it names, Load never panics and no
// error or Invalid message holds the kubeconfig's token, raw or base64.
func FuzzLoad(f *testing.F) {
	f.Add("prod=env:KC", fuzzKubeconfig)
	f.Add("prod=env:KC#c\nbad line", fuzzKubeconfig)
	f.Add("prod=env:KC", strings.Replace(fuzzKubeconfig, "token:", "tokenFile:", 1))
	f.Add("prod=env:KC", base64.RawURLEncoding.EncodeToString([]byte(fuzzKubeconfig)))
	f.Fuzz(func(t *testing.T, clusters, kubeconfig string) {
		if !strings.Contains(kubeconfig, fuzzToken) {
			return // the property is about this token
		}
		env := Env{Getenv: func(k string) string {
			if k == "KC" {
				return kubeconfig
			}
			return ""
		}}
		got, _, err := Load(Input{Clusters: clusters}, env)
		texts := []string{}
		if err != nil {
			texts = append(texts, err.Error())
		}
		for _, c := range got {
			texts = append(texts, c.Invalid, c.Name, c.Source)
		}
		for _, text := range texts {
			for _, form := range []string{fuzzToken, base64.StdEncoding.EncodeToString([]byte(fuzzToken))} {
				if strings.Contains(text, form) && !strings.Contains(clusters, form) {
					t.Fatalf("Load(%q) leaked the token: %q", clusters, text)
				}
			}
		}
	})
}
