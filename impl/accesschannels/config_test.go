package accesschannels_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func TestConfigDefaultsAreTheSeeds(t *testing.T) {
	c, err := accesschannels.New(rt.Real(), authztest.New(rt.Real()), accesschannels.Config{})
	require.NoError(t, err)
	cfg := c.Config()
	assert.Equal(t, time.Second, cfg.MaxAgeOpen, "OPEN_CHANNELS_MAX_AGE")
	assert.Equal(t, 10*time.Second, cfg.TTL)
	assert.Equal(t, accesschannels.DefaultMemberCapacity, cfg.MemberCapacity)
	assert.Equal(t, accesschannels.DefaultCommunityCapacity, cfg.CommunityCapacity)
}

func TestNewRejectsNonsense(t *testing.T) {
	db := authztest.New(rt.Real())
	for name, cfg := range map[string]accesschannels.Config{
		"negative max age":       {MaxAgeOpen: -time.Second},
		"negative ttl":           {TTL: -time.Second},
		"max age beyond ttl":     {MaxAgeOpen: 11 * time.Second},
		"negative members":       {MemberCapacity: -1},
		"negative communities":   {CommunityCapacity: -1},
		"max age beyond set ttl": {MaxAgeOpen: 2 * time.Second, TTL: time.Second},
	} { //windtunnel:unordered independent cases
		_, err := accesschannels.New(rt.Real(), db, cfg)
		assert.Error(t, err, name)
	}
	_, err := accesschannels.New(nil, db, accesschannels.Config{})
	assert.Error(t, err)
	_, err = accesschannels.New(rt.Real(), nil, accesschannels.Config{})
	assert.Error(t, err)
	_, err = accesschannels.New(rt.Real(), db, accesschannels.Config{MaxAgeOpen: time.Second, TTL: time.Second})
	assert.NoError(t, err, "MaxAgeOpen == TTL is allowed")
}
