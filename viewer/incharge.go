package viewer

import (
	"errors"
	"fmt"
)

// In charge: what the person does to an instance as a whole from the
// live view (stop, resume, answer a dialog, approve or deny).

// inCharge carries out what a person in charge of an instance does: stop
// or resume its automation, answer a dialog, approve or deny a held
// command. Interactive viewers only.
func (c *conn) inCharge(req *request) error {
	if !c.interactive {
		return errors.New("this viewer may only watch")
	}
	if req.Instance == "" {
		return errors.New(req.Type + " needs an instance")
	}
	in := c.srv.instance(c.tenant, req.Instance)
	if in == nil {
		return errNoInstance // another tenant's is no more there than one that never was
	}
	var err error
	switch req.Type {
	case msgStop:
		err = in.Stop(c.holder)
	case msgResume:
		err = in.Resume(c.holder)
	case msgDialog:
		if req.Tab == 0 || req.Accept == nil {
			return errors.New("answer-dialog needs a tab and accept (true or false)")
		}
		if len(req.PromptText) > 4096 {
			return errors.New("a prompt's text is at most 4096 bytes")
		}
		err = in.AnswerDialog(req.Tab, req.Dialog, *req.Accept, req.PromptText, c.holder)
	case msgApprove, msgDeny:
		if req.Approval == 0 {
			return errors.New(req.Type + " needs an approval id")
		}
		if req.Type == msgApprove {
			err = in.Approve(req.Approval, c.holder)
		} else {
			err = in.Deny(req.Approval, c.holder)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", req.Type, err)
	}
	c.log.Info(req.Type, "instance", req.Instance, "tab", req.Tab, "approval", req.Approval)
	return nil
}
