/** The dashboard's entry: its styles and the app, rendered into the page the service serves. */
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

render(<App />, document.getElementById('app')!);
