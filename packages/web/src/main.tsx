// Entry point of the web inbox bundle.
import { render } from 'preact';
import { App } from './ui/app.js';
import { registerServiceWorker } from './pwa.js';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
registerServiceWorker();
