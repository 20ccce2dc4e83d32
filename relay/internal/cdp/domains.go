package cdp

// Domains are the protocol's domains the relay tells apart by index (its
// metrics count messages by them, its method table keeps a method's). The
// last, "other", stands for every domain the list lacks, so that a client
// cannot mint label values.
var Domains = [...]string{
	"Accessibility", "Animation", "Audits", "Autofill", "BackgroundService", "Browser",
	"CSS", "CacheStorage", "Cast", "DOM", "DOMDebugger", "DOMSnapshot", "DOMStorage",
	"Debugger", "DeviceAccess", "DeviceOrientation", "Emulation", "EventBreakpoints",
	"Extensions", "FedCm", "Fetch", "FileSystem", "HeadlessExperimental", "HeapProfiler",
	"IO", "IndexedDB", "Input", "Inspector", "LayerTree", "Log", "Media", "Memory",
	"Network", "Overlay", "PWA", "Page", "Performance", "PerformanceTimeline",
	"Preload", "Profiler", "Runtime", "Schema", "Security", "ServiceWorker", "Storage",
	"SystemInfo", "Target", "Tethering", "Tracing", "WebAudio", "WebAuthn", "other",
}

// DomainOther is the index in Domains of every domain the list lacks.
const DomainOther = len(Domains) - 1

var domainIndex = func() map[string]int {
	m := make(map[string]int, len(Domains))
	for i, d := range Domains {
		m[d] = i
	}
	return m
}()

// The domains the relay's emulation tells apart.
var (
	DomainBrowser = DomainIndex("Browser")
	DomainTarget  = DomainIndex("Target")
)

// DomainIndex returns the index in Domains of the domain name, DomainOther
// for one the list lacks.
func DomainIndex(name string) int {
	if n, ok := domainIndex[name]; ok {
		return n
	}
	return DomainOther
}

// DomainOf returns the index in Domains of method's domain (what comes
// before its first dot), DomainOther for one the list lacks.
func DomainOf(method []byte) int {
	for i, c := range method {
		if c == '.' {
			if n, ok := domainIndex[string(method[:i])]; ok {
				return n
			}
			break
		}
	}
	return DomainOther
}
