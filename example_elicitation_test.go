package acp_test

import (
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/schema"
)

// An elicitation handler reads the typed form, shows each field, and
// answers with values that Accept checks against the form first.
func ExampleElicitationSchema_Accept() {
	req := &schema.CreateElicitationRequest{Mode: schema.ElicitationModeForm, Message: "How should I deploy?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"strategy":{"type":"string","title":"Strategy","oneOf":[{"const":"safe","title":"Canary first"},{"const":"fast","title":"All at once"}]},
			"replicas":{"type":"integer","minimum":1,"maximum":9,"default":3}},
			"required":["strategy"]}`)}
	form, err := req.Schema()
	if err != nil {
		panic(err)
	}
	for _, f := range form.Fields {
		switch p := f.Property.(type) {
		case *schema.ElicitationString:
			fmt.Printf("%s (required %v): choose from %d options\n", p.Title, f.Required, len(p.Options()))
		case *schema.ElicitationInteger:
			fmt.Printf("%s: integer from %d to %d, default %d\n", f.Name, *p.Minimum, *p.Maximum, *p.Default)
		}
	}
	values := form.Defaults()
	_, err = form.Accept(values)
	fmt.Println(err)
	values["strategy"] = "safe"
	answer, _ := form.Accept(values)
	fmt.Println(answer.Action, string(answer.Content))
	// Output:
	// Strategy (required true): choose from 2 options
	// replicas: integer from 1 to 9, default 3
	// acp: the elicitation answer does not match the requested schema: "strategy" is required
	// accept {"replicas":3,"strategy":"safe"}
}
