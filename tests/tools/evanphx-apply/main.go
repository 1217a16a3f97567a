// evanphx-apply DOC PATCH_BASE64_FILE: prints DOC with the base64 RFC 6902 patch
// applied by evanphx/json-patch v4, the library and calls kube-apiserver's
// mutating webhook dispatcher uses (jsonpatch.DecodePatch, then Apply).
package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: evanphx-apply DOC.json PATCH_BASE64_FILE")
		os.Exit(2)
	}
	doc, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	encoded, err := os.ReadFile(os.Args[2])
	if err != nil {
		fail(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(encoded)))
	if err != nil {
		fail(fmt.Errorf("patch is not standard base64: %w", err))
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		fail(fmt.Errorf("patch does not decode: %w", err))
	}
	out, err := patch.Apply(doc)
	if err != nil {
		fail(fmt.Errorf("patch does not apply: %w", err))
	}
	os.Stdout.Write(out)
	os.Stdout.Write([]byte("\n"))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "evanphx-apply:", err)
	os.Exit(1)
}
