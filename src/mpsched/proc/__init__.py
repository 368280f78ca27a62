"""Process and run control: what a run starts and how it is cleaned up (`cleanup`), BMv2
processes (`bmv2`), the controller process (`controller`), veth pairs (`veth`), the
prerequisite checks (`prereqs`) and where the project's files are (`layout`)."""
