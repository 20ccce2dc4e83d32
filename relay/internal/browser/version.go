package browser

import "github.com/cdprelay/cdprelay/relay/internal/core"

// VersionEmulations answer Browser.getVersion at the relay, at every
// level, from what the extension or a tab said of the browser
// (core.BrowserInfo).
func VersionEmulations() map[string]core.Emulation {
	return map[string]core.Emulation{"Browser.getVersion": {Fn: browserGetVersion}}
}

func browserGetVersion(c *core.ClientConn, k core.Call) {
	info := c.Inst.Info()
	if info.UserAgent == "" {
		// An extension that does not say (the stock one) and a browser
		// not asked yet: ask a tab, beside the read loop.
		c.Wg.Add(1)
		c.Inst.Tasks.Spawn("browser version", func() {
			defer c.Wg.Done()
			info, err := c.Inst.EnsureInfo(c.Ctx, c.Ext())
			if err != nil {
				c.Fail(k, core.CodeServerError, "cdprelay: the browser's version is not known: "+err.Error())
				return
			}
			replyVersion(c, k, info)
		})
		return
	}
	replyVersion(c, k, info)
}

func replyVersion(c *core.ClientConn, k core.Call, info core.BrowserInfo) {
	product := info.Product
	if product == "" {
		product = "Chrome/" + info.Version
	}
	c.Reply(k, map[string]string{
		"protocolVersion": "1.3",
		"product":         product,
		"revision":        "",
		"userAgent":       info.UserAgent,
		"jsVersion":       "",
	})
}
