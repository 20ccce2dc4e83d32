package creds

// A password field holding a typed secret: what of its gate is text
// alone.

// FieldSafe reports whether DOM method name changes nothing a page shows
// of its fields: focus (chromedp's Focus), an upload's files (judged by
// the upload rule), DevTools' own bookkeeping. Such a write passes while a
// password field of the page holds a typed secret.
func FieldSafe(name string) bool { return fieldSafe[name] }

var fieldSafe = map[string]bool{
	"DOM.focus": true, "DOM.setFileInputFiles": true, "DOM.setInspectedNode": true,
	"DOM.setNodeStackTracesEnabled": true, "DOM.markUndoableState": true,
}

// FieldProbe says whether a field the relay typed a secret into shows
// dots: it does when it is gone from its document or empty, or a password
// field whose dots no style took away. It is called on the field.
const FieldProbe = `function () {
  if (!this.isConnected || this.value === "") return true;
  const view = this.ownerDocument.defaultView;
  const style = view ? view.getComputedStyle(this) : null;
  return this.tagName === "INPUT" && this.type === "password" && !!style && style.webkitTextSecurity !== "none";
}`
