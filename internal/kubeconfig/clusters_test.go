package kubeconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseClusters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    []entry
		wantErr string
	}{{
		name: "every source form, comments and blank lines",
		text: "# clusters\n\nprod=env:PROD_KUBECONFIG\n  stg = env:KUBECONFIGS#stg-eu \r\n\t# dev below\ndev.eu_1=file:kc/dev.yaml\nlocal=file:/tmp/a#b/kc.yaml#kind-dev\nctx=context:arn:aws:eks:eu-west-1:1:cluster/x#y\n",
		want: []entry{
			{line: 3, text: "prod=env:PROD_KUBECONFIG", name: "prod", kind: "env", ref: "PROD_KUBECONFIG"},
			{line: 4, text: "stg = env:KUBECONFIGS#stg-eu", name: "stg", kind: "env", ref: "KUBECONFIGS", context: "stg-eu"},
			{line: 6, text: "dev.eu_1=file:kc/dev.yaml", name: "dev.eu_1", kind: "file", ref: "kc/dev.yaml"},
			{line: 7, text: "local=file:/tmp/a#b/kc.yaml#kind-dev", name: "local", kind: "file", ref: "/tmp/a#b/kc.yaml", context: "kind-dev"},
			{line: 8, text: "ctx=context:arn:aws:eks:eu-west-1:1:cluster/x#y", name: "ctx", kind: "context", ref: "arn:aws:eks:eu-west-1:1:cluster/x#y"},
		},
	}, {
		name: "empty",
		text: "\n  \n# nothing\n",
	}, {
		name:    "no '='",
		text:    "prod=env:A\nstaging",
		wantErr: `input clusters line 2: "staging": expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE`,
	}, {
		name:    "no source kind",
		text:    "prod=PROD_KUBECONFIG",
		wantErr: `input clusters line 1: "prod=PROD_KUBECONFIG": expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE`,
	}, {
		name:    "unknown source kind",
		text:    "prod=secret:PROD",
		wantErr: `input clusters line 1: "prod=secret:PROD": unknown source "secret:"; expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE`,
	}, {
		name:    "bad names",
		text:    "-prod=env:A\n=env:A\npr od=env:A\n" + "a234567890123456789012345678901234567890123456789012345678901234=env:A",
		wantErr: `input clusters line 1: "-prod=env:A": invalid cluster name "-prod": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit` + "\n" + `input clusters line 2: "=env:A": missing cluster name before '='; expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE` + "\n" + `input clusters line 3: "pr od=env:A": invalid cluster name "pr od": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit` + "\n" + `input clusters line 4: "a234567890123456789012345678901234567890123456789012345678901234=env:A": invalid cluster name "a234567890123456789012345678901234567890123456789012345678901234": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit`,
	}, {
		name:    "':' instead of '='",
		text:    "prod: env:PROD_KUBECONFIG",
		wantErr: `input clusters line 1: "prod: env:PROD_KUBECONFIG": write prod=env:PROD_KUBECONFIG, with '=' between the cluster name and the source`,
	}, {
		name:    "duplicate name",
		text:    "prod=env:A\n\n\nprod=env:B",
		wantErr: `input clusters line 4: duplicate cluster name "prod" (first on line 1)`,
	}, {
		name:    "bad variable, empty path, context or #context",
		text:    "a=env:${{ secrets.X }}\nb=file:\nc=context:\nd=env:KC#",
		wantErr: `input clusters line 1: "a=env:${{ secrets.X }}": env: needs an environment variable name (letters, digits and _), e.g. a=env:A_KUBECONFIG` + "\n" + `input clusters line 2: "b=file:": file: needs a path, e.g. b=file:kubeconfigs/b.yaml` + "\n" + `input clusters line 3: "c=context:": context: needs a context name of the kubeconfig input, e.g. c=context:c` + "\n" + `input clusters line 4: "d=env:KC#": empty context after '#': write env:KC#CONTEXT, or drop the '#' to use the current-context`,
	}, {
		name:    "pasted kubeconfig lines and tokens are not shown",
		text:    "apiVersion: v1\n    token: " + tokenFor("a") + "\nprod=" + b64("apiVersion: v1\nkind: Config\n") + "\n" + "x=token=abc",
		wantErr: `input clusters line 1: this line looks like kubeconfig contents or a credential (not shown); expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE: put the kubeconfig in an environment variable and write name=env:VAR` + "\n" + `input clusters line 2: this line looks like kubeconfig contents or a credential (not shown); expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE: put the kubeconfig in an environment variable and write name=env:VAR` + "\n" + `input clusters line 3: this line looks like kubeconfig contents or a credential (not shown); expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE: put the kubeconfig in an environment variable and write name=env:VAR` + "\n" + `input clusters line 4: this line looks like kubeconfig contents or a credential (not shown); expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE: put the kubeconfig in an environment variable and write name=env:VAR`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseClusters(tt.text, "input clusters")
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("parseClusters() error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(entry{})); diff != "" {
				t.Errorf("parseClusters() (-want +got):\n%s", diff)
			}
		})
	}
}
