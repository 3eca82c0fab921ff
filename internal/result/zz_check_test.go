package result
import (
	_ "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	_ "github.com/fluxcd/pkg/apis/meta"
	_ "github.com/sethvargo/go-githubactions"
	_ "golang.org/x/sync/errgroup"
	_ "k8s.io/client-go/dynamic/dynamicinformer"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/metadata/metadatainformer"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/restmapper"
	_ "k8s.io/client-go/discovery/cached/memory"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/google/go-cmp/cmp"
	_ "sigs.k8s.io/yaml"
)
