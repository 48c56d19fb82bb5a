package pods

// FlowCall is one cell of the fault table: a flow (a path through impl
// from an exported operation) and one fallible database or bus call it
// makes.
type FlowCall struct {
	Flow string // "accesschannels.Cache.Accessible>Cache.lookup>…"
	Call string // "authz.Conn.MemberChannels"
	// Family is the claim family whose check flies the cell under every
	// fault kind (FaultKinds): OC, MS, or Relay (flown by both families'
	// writer-pod checks).
	Family string
}

// Key is the cell without its family, as the source derives it.
func (f FlowCall) Key() FlowCall { return FlowCall{Flow: f.Flow, Call: f.Call} }

func (f FlowCall) String() string { return f.Flow + " → " + f.Call }

// Flows is every (flow, call) cell of impl/accesschannels,
// impl/membership and impl/relay. TestFlowsTableMatchesTheSource derives
// the cells from the source and fails when a cell is missing here or
// listed here but gone.
var Flows = []FlowCall{
	{Family: "OC", Flow: "accesschannels.Cache.Accessible>Cache.lookup>Cache.memberHalf>Cache.readMember", Call: "authz.Pool.Acquire"},
	{Family: "OC", Flow: "accesschannels.Cache.Accessible>Cache.lookup>Cache.memberHalf>Cache.readMember", Call: "authz.Conn.MemberChannels"},
	{Family: "OC", Flow: "accesschannels.Cache.Accessible>Cache.lookup>Cache.openHalf>Cache.fill>Cache.readOpen", Call: "authz.Pool.Acquire"},
	{Family: "OC", Flow: "accesschannels.Cache.Accessible>Cache.lookup>Cache.openHalf>Cache.fill>Cache.readOpen", Call: "authz.Conn.ListedOpenChannels"},
	{Family: "OC", Flow: "accesschannels.Cache.Granted>Cache.lookup>Cache.memberHalf>Cache.readMember", Call: "authz.Pool.Acquire"},
	{Family: "OC", Flow: "accesschannels.Cache.Granted>Cache.lookup>Cache.memberHalf>Cache.readMember", Call: "authz.Conn.MemberChannels"},
	{Family: "OC", Flow: "accesschannels.Cache.Granted>Cache.lookup>Cache.openHalf>Cache.fill>Cache.readOpen", Call: "authz.Pool.Acquire"},
	{Family: "OC", Flow: "accesschannels.Cache.Granted>Cache.lookup>Cache.openHalf>Cache.fill>Cache.readOpen", Call: "authz.Conn.ListedOpenChannels"},
	{Family: "OC", Flow: "accesschannels.Cache.AccessibleUncached", Call: "authz.Pool.Acquire"},
	{Family: "OC", Flow: "accesschannels.Cache.AccessibleUncached", Call: "authz.Conn.MemberChannels"},
	{Family: "OC", Flow: "accesschannels.Cache.AccessibleUncached", Call: "authz.Conn.ListedOpenChannels"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.load>Cache.fetch", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.load>Cache.fetch", Call: "authz.Conn.ActiveMemberships"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.load>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.load>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.waitTimeoutCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.IsMember>Cache.waitTimeoutCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.load>Cache.fetch", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.load>Cache.fetch", Call: "authz.Conn.ActiveMemberships"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.load>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.load>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.oversizeCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.waitTimeoutCheck>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.IsMember>Cache.waitTimeoutCheck>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.pointCheck", Call: "authz.Pool.Acquire"},
	{Family: "MS", Flow: "membership.Cache.Subscribe>Cache.pointCheck", Call: "authz.Conn.IsActiveMember"},
	{Family: "Relay", Flow: "relay.Relay.Changed", Call: "authz.Publisher.Publish"},
}
